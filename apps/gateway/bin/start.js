// `npm start`: the gateway from the compiled build (`npm run build`, which npm runs first as `prestart`). The Node
// check comes first and loads nothing else, so an old Node gets one line instead of a crash inside a dependency.
// npm runs this as `exec node …`, so SIGTERM and SIGINT reach the gateway itself (its graceful stop), not a shell.
import './check-node.js';

const { main } = await import('../dist/main.js');
await main(process.argv.slice(2));
