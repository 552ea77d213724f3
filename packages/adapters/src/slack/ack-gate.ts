/**
 * When an Events API delivery (an HTTP request, a Socket Mode envelope) is acknowledged: once every message it
 * carries was handed over — the gateway's mailbox took it and, with HERALD_REDIS_WAIT_REPLICAS, a replica has it
 * too. A Redis primary that dies after the acknowledgement therefore cannot lose the message; without one, Slack
 * redelivers the event (HTTP retry, Socket Mode redelivery), and the redelivery joins the hand-over still running
 * (ingress.ts remembers each one), so the message is taken once.
 *
 * Bolt acknowledges event payloads itself before any listener runs; the transports give it an ack that does
 * nothing for events and ask this gate instead. The hand-over is bounded by SLACK_ACK_BUDGET_MS: past it the event
 * is not acknowledged (Slack's 3 s would run out anyway) while the hand-over goes on in the background.
 */
import { outcomeWithin } from './command-gate.js';
import { isRecord } from '../shared/wire-values.js';

/** The context key (Bolt customProperties) under which the ingress finds the delivery of the event it handles. */
export const DELIVERY_KEY = 'heraldDelivery';

export type DeliveryOutcome = 'taken' | 'failed' | 'pending' | 'unreadable';

export class EventDelivery {
  private readonly handOvers: Promise<void>[] = [];
  private processed!: () => void;
  private readonly processing = new Promise<void>((resolve) => {
    this.processed = resolve;
  });
  /** Resolves once Bolt is done with the event and every hand-over it started or joined succeeded; rejects when one failed. */
  readonly taken: Promise<void> = this.processing.then(async () => {
    // Hand-overs may be added while earlier ones run (a thread check first): wait until the list stops growing.
    for (let seen = 0; seen < this.handOvers.length; ) {
      const batch = this.handOvers.slice(seen);
      seen = this.handOvers.length;
      await Promise.all(batch);
    }
  });

  constructor() {
    // Whoever asks for the outcome handles a failure; nobody may be asking any more (a delivery past its budget).
    this.taken.catch(() => {});
  }

  /** A hand-over the event started, or joined (a redelivery, or the second event Slack sends for one mention). */
  add(handOver: Promise<void>): void {
    this.handOvers.push(handOver);
  }

  /** Bolt is done with the event (its listeners returned): no more hand-overs will be added. */
  done(): void {
    this.processed();
  }
}

/** The delivery the transport put into Bolt's context, if it is an event being gated. */
export function deliveryOf(context: Record<string, unknown>): EventDelivery | undefined {
  const d = context[DELIVERY_KEY];
  return d instanceof EventDelivery ? d : undefined;
}

/**
 * Runs Bolt on one event (`process` gets the delivery to pass as customProperties) and says, within `budgetMs`,
 * whether it may be acknowledged: `taken`; `failed` (a hand-over was given up); `pending` (still running);
 * `unreadable` (`process` rejected: Bolt could not read the payload's shape, which no redelivery changes).
 */
export async function gateEvent(process: (delivery: EventDelivery) => Promise<unknown>, budgetMs: number): Promise<DeliveryOutcome> {
  const delivery = new EventDelivery();
  let unreadable = false;
  void process(delivery)
    .catch(() => {
      unreadable = true;
    })
    .finally(() => delivery.done());
  const outcome = await outcomeWithin(delivery.taken, budgetMs);
  return unreadable ? 'unreadable' : outcome;
}

/** An event payload (not a slash command or an interaction): Bolt acks these itself, so they go through the gate. */
export function isEventCallback(body: unknown): boolean {
  return isRecord(body) && body.type === 'event_callback';
}
