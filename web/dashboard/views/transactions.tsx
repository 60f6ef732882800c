/**
 * Transactions, newest first (the API's cursors), and one transaction's state timeline: each event
 * written for it (the outbox carries every transition, stamped on the platform's clock), and the
 * quote behind it.
 */
import { useState } from 'preact/hooks';
import { get, type PageOf, type Session, type Wire } from '../api.ts';
import { usePaged, usePolled } from '../hooks.ts';
import { ErrorLine, Head, Money, Pager, Section, Status, str, Time } from '../ui.tsx';

export function Transactions({ s }: { s: Session }) {
  const list = usePaged<Wire>(s, '/transactions');
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <Section title="Transactions">
      <ErrorLine error={list.error} />
      <table data-testid="transactions">
        <Head cols={['Transaction', 'Type', 'Status', 'Sent', 'Received', 'Created']} />
        <tbody>
          {list.data?.data.map((t) => (
            <tr key={t.id} data-id={t.id} class={open === t.id ? 'selected' : ''} onClick={() => setOpen(open === t.id ? undefined : t.id)}>
              <td>
                <button type="button" class="link">
                  {t.id}
                </button>
              </td>
              <td>{str(t.type)}</td>
              <td>
                <Status value={t.status} />
              </td>
              <td>
                <Money value={t.sentAmount} />
              </td>
              <td>
                <Money value={t.receivedAmount} />
              </td>
              <td>
                <Time value={t.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager list={list} label="transactions" />
      {open ? <TransactionDetail s={s} id={open} /> : null}
    </Section>
  );
}

function TransactionDetail({ s, id }: { s: Session; id: string }) {
  const tx = usePolled(() => get<Wire>(s, `/transactions/${encodeURIComponent(id)}`), id);
  const events = usePolled(() => get<PageOf<Wire>>(s, '/webhooks/deliveries', { resourceId: id, limit: 100 }), `events-${id}`);
  const quoteId = typeof tx.data?.quoteId === 'string' ? tx.data.quoteId : undefined;
  // Oldest first: the order the transitions happened in (ids are time-ordered).
  const timeline = [...(events.data?.data ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1));
  return (
    <div class="detail" data-testid="transaction-detail">
      <h3>
        {id} <Status value={tx.data?.status} />
      </h3>
      <ErrorLine error={tx.error ?? events.error} />
      {tx.data?.failureReason ? <p data-testid="failure-reason">Failure reason: {str(tx.data.failureReason)}</p> : null}
      <h4>Timeline (platform clock)</h4>
      <ol class="timeline" data-testid="timeline">
        <li>
          <Time value={tx.data?.createdAt} /> created
        </li>
        {timeline.map((e) => (
          <li key={e.id}>
            <Time value={e.createdAt} /> <strong>{str(e.type)}</strong> <span class="muted">webhook {str(e.status)}</span>
          </li>
        ))}
      </ol>
      {quoteId ? <QuoteBehind s={s} quoteId={quoteId} /> : <p class="muted">No quote: a direct transfer.</p>}
    </div>
  );
}

function QuoteBehind({ s, quoteId }: { s: Session; quoteId: string }) {
  const q = usePolled(() => get<Wire>(s, `/quotes/${encodeURIComponent(quoteId)}`), quoteId);
  const d = q.data;
  return (
    <div data-testid="quote">
      <h4>Quote {quoteId}</h4>
      <ErrorLine error={q.error} />
      {d ? (
        <dl>
          <dt>Status</dt>
          <dd>
            <Status value={d.status} />
          </dd>
          <dt>Sending</dt>
          <dd>
            {str(d.totalSendingAmount)} {str((d.sendingCurrency as { code?: string } | undefined)?.code)}
          </dd>
          <dt>Receiving</dt>
          <dd>
            {str(d.totalReceivingAmount)} {str((d.receivingCurrency as { code?: string } | undefined)?.code)}
          </dd>
          <dt>Exchange rate</dt>
          <dd>{str(String(d.exchangeRate))}</dd>
          <dt>Fees included</dt>
          <dd>{str(String(d.feesIncluded))}</dd>
          <dt>Expires</dt>
          <dd>
            <Time value={d.expiresAt} />
          </dd>
        </dl>
      ) : null}
    </div>
  );
}
