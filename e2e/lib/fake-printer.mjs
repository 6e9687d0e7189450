// A kitchen printer in Node for tests/17-printers: a TCP server on
// 127.0.0.1 that keeps every byte it receives and, whenever what it has
// received ends with the ESC/POS status request DLE EOT 1 (0x10 0x04
// 0x01), answers one byte 0x12 (online), as Epson TM printers do. Stopped,
// it closes its listener and cuts every connection, like a printer
// unplugged; started again on the same port, it is the printer back.

import { createServer } from 'node:net';

const STATUS_REQUEST = Buffer.from([0x10, 0x04, 0x01]);
const ONLINE = Buffer.from([0x12]);

export class FakePrinter {
  /** Listens on 127.0.0.1:`port` (0: any free port). */
  static async start(port = 0) {
    const printer = new FakePrinter();
    await printer.listen(port);
    return printer;
  }

  constructor() {
    this.chunks = [];
    this.sockets = new Set();
    this.server = null;
    this.port = 0;
  }

  listen(port) {
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      let seen = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        this.chunks.push(chunk);
        seen = Buffer.concat([seen, chunk]).subarray(-STATUS_REQUEST.length);
        if (seen.equals(STATUS_REQUEST)) socket.write(ONLINE);
      });
      socket.on('error', () => {});
      socket.on('close', () => this.sockets.delete(socket));
    });
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.port = this.server.address().port;
        resolve();
      });
    });
  }

  get address() {
    return `127.0.0.1:${this.port}`;
  }

  /** Everything received so far, decoded roughly (one byte, one character). */
  text() {
    return Buffer.concat(this.chunks).toString('latin1');
  }

  /** Unplugged: no new connection, the open ones cut. */
  async stop() {
    const closed = new Promise((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }
}
