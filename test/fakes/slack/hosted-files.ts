/**
 * Slack's private file hosting: a shared file's `url_private` / `url_private_download` (under `/files-pri/`)
 * serves the bytes only with the bot token as `Authorization: Bearer`. Without it (or with another token) Slack
 * does not answer 401: it redirects to the workspace's sign-in page, an HTML page with status 200, which is what
 * a client that forgot the token ends up saving. The app also needs the `files:read` scope.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const SIGN_IN_PAGE = '<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Herald Test | Slack</body></html>';

interface StoredFile {
  bytes: Buffer;
  mimetype: string;
}

export interface SlackFileInput {
  name: string;
  mimetype: string;
  content: Buffer;
  /** Slack's subtype for voice clips recorded in the client is `slack_audio`. */
  subtype?: string;
  /**
   * `check_file_info`: the event carries only the file's id (`mode: 'file_access'`), as Slack does for files shared
   * over Slack Connect and for some large files; the app must call `files.info` for the real file object.
   */
  fileAccess?: 'check_file_info';
}

export class FakeSlackFiles {
  private readonly files = new Map<string, StoredFile>();
  /** The full file object of each shared file, by id: what `files.info` answers. */
  private readonly objects = new Map<string, Record<string, unknown>>();
  readonly downloads: { path: string; status: number; authorized: boolean }[] = [];

  constructor(
    private readonly origin: () => string,
    private readonly teamId: string,
    private readonly allowed: (token: string) => boolean,
  ) {}

  /** Stores a file; returns the file object an event's `files` array carries (a stub for `check_file_info`). */
  share(input: SlackFileInput, user: string): Record<string, unknown> {
    const full = this.store(input, user);
    if (input.fileAccess !== 'check_file_info') return full;
    return { id: full.id, mode: 'file_access', file_access: 'check_file_info', created: 0, timestamp: 0, user: '' };
  }

  /** `files.info`'s `file`: the whole file object, or undefined for an id Slack does not know. */
  info(id: string): Record<string, unknown> | undefined {
    return this.objects.get(id);
  }

  private store(input: SlackFileInput, user: string): Record<string, unknown> {
    const id = `F${randomBytes(5).toString('hex').toUpperCase()}`;
    const path = `/files-pri/${this.teamId}-${id}/${encodeURIComponent(input.name)}`;
    this.files.set(path, { bytes: input.content, mimetype: input.mimetype });
    const filetype = input.name.split('.').pop() ?? 'binary';
    const object: Record<string, unknown> = {
      id,
      created: Math.floor(Date.now() / 1000),
      timestamp: Math.floor(Date.now() / 1000),
      name: input.name,
      title: input.name,
      mimetype: input.mimetype,
      filetype,
      pretty_type: filetype.toUpperCase(),
      user,
      user_team: this.teamId,
      mode: 'hosted',
      editable: false,
      is_external: false,
      external_type: '',
      is_public: false,
      size: input.content.length,
      url_private: `${this.origin()}${path}`,
      url_private_download: `${this.origin()}/files-pri/${this.teamId}-${id}/download/${encodeURIComponent(input.name)}`,
      permalink: `https://herald-fake.slack.com/files/${user}/${id}/${encodeURIComponent(input.name)}`,
      ...(input.subtype !== undefined && { subtype: input.subtype }),
    };
    this.objects.set(id, object);
    return object;
  }

  /** Answers `/files-pri/…` and the sign-in page; false for anything else. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/signin') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(SIGN_IN_PAGE);
      return true;
    }
    if (!url.pathname.startsWith('/files-pri/')) return false;
    const path = url.pathname.replace(/\/download\//, '/');
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const authorized = this.allowed(token);
    const file = this.files.get(path);
    if (!authorized) {
      this.downloads.push({ path, status: 302, authorized });
      res.writeHead(302, { location: `${this.origin()}/signin?redir=${encodeURIComponent(url.pathname)}` });
      res.end();
      return true;
    }
    if (!file) {
      this.downloads.push({ path, status: 404, authorized });
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('file_not_found');
      return true;
    }
    this.downloads.push({ path, status: 200, authorized });
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': file.bytes.length });
    res.end(file.bytes);
    return true;
  }
}
