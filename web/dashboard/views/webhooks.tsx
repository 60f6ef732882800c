/** Webhook deliveries, each with every attempt (status, latency, response), and a replay button. */
import { useState } from 'preact/hooks';
import { get, post, type Session, type Wire } from '../api.ts';
import { usePaged, usePolled } from '../hooks.ts';
import { ErrorLine, Head, Pager, Section, Status, str, Time } from '../ui.tsx';

export function Webhooks({ s }: { s: Session }) {
  const list = usePaged<Wire>(s, '/webhooks/deliveries');
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <Section title="Webhook deliveries">
      <ErrorLine error={list.error} />
      <table data-testid="deliveries">
        <Head cols={['Event', 'Type', 'Resource', 'Status', 'Attempts', 'Created']} />
        <tbody>
          {list.data?.data.map((d) => (
            <tr key={d.id} data-id={d.id} class={open === d.id ? 'selected' : ''} onClick={() => setOpen(open === d.id ? undefined : d.id)}>
              <td>
                <button type="button" class="link">
                  {d.id}
                </button>
              </td>
              <td>{str(d.type)}</td>
              <td>
                <code>{str(d.resourceId)}</code>
              </td>
              <td>
                <Status value={d.status} />
              </td>
              <td>{str(String(d.attemptCount))}</td>
              <td>
                <Time value={d.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager list={list} label="deliveries" />
      {open ? <Delivery s={s} id={open} /> : null}
    </Section>
  );
}

function Delivery({ s, id }: { s: Session; id: string }) {
  const d = usePolled(() => get<Wire>(s, `/webhooks/deliveries/${encodeURIComponent(id)}`), id);
  const [note, setNote] = useState<string | undefined>(undefined);
  const attempts = (d.data?.attempts ?? []) as Wire[];
  const replay = async () => {
    setNote(undefined);
    try {
      await post(s, `/webhooks/deliveries/${encodeURIComponent(id)}/replay`);
      setNote('Replayed');
    } catch (e) {
      setNote(`Replay failed: ${(e as Error).message}`);
    }
    d.reload();
  };
  return (
    <div class="detail" data-testid="delivery-detail">
      <h3>
        {id} <Status value={d.data?.status} />
      </h3>
      <ErrorLine error={d.error} />
      <button type="button" onClick={replay}>
        Replay
      </button>
      {note ? <span class="note">{note}</span> : null}
      <table data-testid="attempts">
        <Head cols={['#', 'At', 'URL', 'Status', 'Latency', 'Response']} />
        <tbody>
          {attempts.map((a) => (
            <tr key={String(a.attempt)}>
              <td>{str(String(a.attempt))}</td>
              <td>
                <Time value={a.at} />
              </td>
              <td>{str(a.url)}</td>
              <td>{a.responseStatus === undefined ? str(a.error) : str(String(a.responseStatus))}</td>
              <td>{str(String(a.latencyMs))} ms</td>
              <td>
                <code class="clip">{str(a.responseBody ?? '')}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h4>Payload</h4>
      <pre class="clip">{d.data ? JSON.stringify(d.data.data, null, 2) : ''}</pre>
    </div>
  );
}
