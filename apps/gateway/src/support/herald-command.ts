/**
 * How a person runs the `herald` command: the gateway workspace's bin, through npx. A bare `herald` is on PATH only
 * inside npm scripts ("command not found" in a shell); `npx herald …` works in a checkout after `npm install` and in
 * the Docker image's /app (`docker compose exec gateway npx herald …`). Every message that tells someone to run a
 * command (the pairing reply, usage lines, hints) names it with this.
 */
export const HERALD_COMMAND = 'npx herald';
