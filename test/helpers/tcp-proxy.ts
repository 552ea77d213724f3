/**
 * A TCP relay in front of a real server (PostgreSQL, in the tests), so a test can make the database vanish for
 * the processes behind it and come back, without stopping the server other tests share: `cut()` drops every
 * connection and stops listening (connections are refused, as when the server is down), `restore()` listens on
 * the same port again. Start it cut to simulate a database that is not up yet.
 */
import net from 'node:net';
import { freePort } from './ports.js';

export interface TcpProxy {
  port: number;
  /** Connections relayed so far. */
  readonly connections: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, opts: { startCut?: boolean } = {}): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let connections = 0;
  let server: net.Server | null = null;

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const srv = net.createServer((client) => {
        connections++;
        const upstream = net.connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => {
        server = srv;
        resolve();
      });
    });

  const stopListening = async (): Promise<void> => {
    const srv = server;
    server = null;
    for (const s of sockets) s.destroy();
    if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
  };

  if (!opts.startCut) await listen();
  return {
    port,
    get connections() {
      return connections;
    },
    cut: stopListening,
    restore: async () => {
      if (!server) await listen();
    },
    close: stopListening,
  };
}
