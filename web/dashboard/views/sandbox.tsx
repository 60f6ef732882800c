/**
 * Sandbox controls: the platform's clock (shown live, advanced here), funding an internal account,
 * triggering an event (POST /sandbox/trigger) and resetting the platform.
 */
import { useState } from 'preact/hooks';
import { get, post, type Session } from '../api.ts';
import { TRIGGERABLE_EVENT_TYPES } from '../../../src/modules/devtools/trigger.types.ts';
import { usePolled } from '../hooks.ts';
import { ErrorLine, Section, str, Time } from '../ui.tsx';

/** Event types the trigger offers: the server's own list (it also names them in its 400). */
const EVENT_TYPES: readonly string[] = TRIGGERABLE_EVENT_TYPES;

export function Sandbox({ s }: { s: Session }) {
  const clock = usePolled(() => get<{ now: string; offsetMs: number }>(s, '/sandbox/clock'), 'clock');
  const [note, setNote] = useState<string | undefined>(undefined);
  const [seconds, setSeconds] = useState('30');
  const [account, setAccount] = useState('');
  const [amount, setAmount] = useState('10000');
  const [eventType, setEventType] = useState('OUTGOING_PAYMENT.COMPLETED');
  const act = async (what: string, fn: () => Promise<unknown>) => {
    setNote(undefined);
    try {
      const out = (await fn()) as { id?: string; event?: { id?: string } } | undefined;
      // The trigger answers with the event it made happen; the others with the resource they changed.
      const id = out?.event?.id ?? out?.id;
      setNote(`${what}: done${id ? ` (${str(id)})` : ''}`);
    } catch (e) {
      setNote(`${what} failed: ${(e as Error).message}`);
    }
    clock.reload();
  };
  return (
    <Section title="Sandbox">
      <ErrorLine error={clock.error} />
      {note ? (
        <p class="note" data-testid="sandbox-note" role="status">
          {note}
        </p>
      ) : null}
      <div class="cards">
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void act('Advance', () => post(s, '/sandbox/clock/advance', { seconds: Number(seconds) }));
          }}
        >
          <h3>Clock</h3>
          <p data-testid="clock-now">
            <Time value={clock.data?.now} />
          </p>
          <p class="muted">{clock.data ? `${Math.round(clock.data.offsetMs / 1000)} s ahead of real time` : ''}</p>
          <label>
            Seconds to advance
            <input name="seconds" type="number" min="1" value={seconds} onInput={(e) => setSeconds(e.currentTarget.value)} />
          </label>
          <button type="submit">Advance clock</button>
        </form>
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void act('Fund', () => post(s, `/sandbox/internal-accounts/${encodeURIComponent(account)}/fund`, { amount: Number(amount) }));
          }}
        >
          <h3>Fund an account</h3>
          <label>
            Internal account id
            <input name="account" value={account} onInput={(e) => setAccount(e.currentTarget.value)} />
          </label>
          <label>
            Amount (smallest unit)
            <input name="amount" type="number" min="1" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
          </label>
          <button type="submit">Fund</button>
        </form>
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void act('Trigger', () => post(s, '/sandbox/trigger', { eventType }));
          }}
        >
          <h3>Trigger an event</h3>
          <label>
            Event type
            <input name="eventType" list="event-types" value={eventType} onInput={(e) => setEventType(e.currentTarget.value)} />
            <datalist id="event-types">
              {EVENT_TYPES.map((t) => (
                <option key={t} value={t} />
              ))}
            </datalist>
          </label>
          <button type="submit">Trigger</button>
        </form>
        <form
          class="card danger"
          onSubmit={(e) => {
            e.preventDefault();
            if (confirm('Wipe this platform’s customers, accounts and history?')) void act('Reset', () => post(s, '/sandbox/reset'));
          }}
        >
          <h3>Reset</h3>
          <p class="muted">Deletes customers, accounts, transactions and webhooks; tokens and configuration stay.</p>
          <button type="submit">Reset platform</button>
        </form>
      </div>
    </Section>
  );
}
