/**
 * The workload's webhook endpoint: a loopback receiver that checks every signature (as the README
 * tells users to) and records each event id it acknowledged. It answers 202 to
 * INCOMING_PAYMENT.PENDING — "waiting for POST /transactions/{id}/approve|reject" — so incoming
 * UMA payments are decided by the workload's own requests, and 200 to everything else.
 *
 * While held (`hold`), it answers nothing: the deliveries wait, their attempts in flight in the
 * processes that sent them, until `release` (the process-loss run kills a process holding some).
 */
import { createServer, type Server } from 'node:http';
import { verifyWebhook } from '../../../src/webhook-delivery/verify.ts';
import { noteWebhook } from '../../helpers/conformance.ts';
import { closeServer, listenLoopback } from '../../helpers/loopback.ts';

export class WebhookReceiver {
  url = '';
  /** The platform's signing key (PEM); set before events arrive. */
  publicKey = '';
  /** Event id → type, for every event acknowledged at least once. */
  readonly acked = new Map<string, string>();
  /** Deliveries per event id (duplicates are allowed: delivery is at least once). */
  readonly deliveries = new Map<string, number>();
  readonly badSignatures: string[] = [];
  private readonly server: Server;
  /** While holding: the deliveries received and not yet answered, with their answer. */
  private held: HeldDelivery[] | undefined;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = String(req.headers['x-grid-signature'] ?? '');
        let event: { id?: unknown; type?: unknown } | undefined;
        try {
          event = JSON.parse(raw.toString('utf8')) as { id?: unknown; type?: unknown };
          noteWebhook(event);
        } catch {
          event = undefined;
        }
        let valid = false;
        try {
          valid = this.publicKey !== '' && verifyWebhook(raw, signature, this.publicKey);
        } catch {
          valid = false;
        }
        if (!valid || typeof event?.id !== 'string' || typeof event.type !== 'string') {
          this.badSignatures.push(`${String(event?.id)}: ${signature}`);
          res.writeHead(400).end('bad signature');
          return;
        }
        const id = event.id;
        const type = event.type;
        this.deliveries.set(id, (this.deliveries.get(id) ?? 0) + 1);
        const answer = () => {
          // A sender that died meanwhile gets no answer (and the event no acknowledgement).
          if (req.socket.destroyed) return;
          res.once('finish', () => this.acked.set(id, type));
          res.writeHead(type === 'INCOMING_PAYMENT.PENDING' ? 202 : 200, { 'content-type': 'text/plain' }).end('ok');
        };
        if (this.held) this.held.push({ id, type, clientPort: req.socket.remotePort ?? 0, answer });
        else answer();
      });
    });
  }

  async listen(): Promise<void> {
    this.url = await listenLoopback(this.server);
  }

  /** The receiver's port (the server side of every delivery's connection). */
  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Stops answering: deliveries wait until `release`. */
  hold(): void {
    this.held ??= [];
  }

  /** The deliveries waiting for an answer now. */
  holding(): readonly HeldDelivery[] {
    return this.held ?? [];
  }

  /** Answers every held delivery (each as it would have been) and answers at once again; returns how many. */
  release(): number {
    const held = this.held ?? [];
    this.held = undefined;
    for (const h of held) h.answer();
    return held.length;
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }
}

/** A delivery the receiver holds: the event, the sender's side of the connection, and its answer. */
export interface HeldDelivery {
  id: string;
  type: string;
  clientPort: number;
  answer: () => void;
}
