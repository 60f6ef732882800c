/** Binding test HTTP servers (webhook receivers) to a free loopback port, and closing them. */
import type { Server } from 'node:http';

/** Listens on 127.0.0.1 at a free port; returns `http://127.0.0.1:<port><path>`. */
export async function listenLoopback(server: Server, path = '/hooks'): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr !== 'object') throw new Error('test server did not bind');
  return `http://127.0.0.1:${addr.port}${path}`;
}

/** Closes the server, dropping keep-alive and hanging connections first. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
