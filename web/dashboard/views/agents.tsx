/** Agents and the actions waiting for approval (approve or reject each). */
import { useState } from 'preact/hooks';
import { post, type Session, type Wire } from '../api.ts';
import { usePaged } from '../hooks.ts';
import { ErrorLine, Head, Pager, Section, Status, str, Time } from '../ui.tsx';

export function Agents({ s }: { s: Session }) {
  const agents = usePaged<Wire>(s, '/agents');
  const approvals = usePaged<Wire>(s, '/agents/approvals');
  const [note, setNote] = useState<string | undefined>(undefined);
  const decide = async (a: Wire, decision: 'approve' | 'reject') => {
    setNote(undefined);
    try {
      const body = decision === 'reject' ? { reason: 'Rejected in the dashboard' } : undefined;
      const out = await post<Wire>(
        s,
        `/agents/${encodeURIComponent(str(a.agentId))}/actions/${encodeURIComponent(a.id)}/${decision}`,
        body,
      );
      setNote(`${a.id}: ${str(out.status)}`);
    } catch (e) {
      setNote(`${decision} failed: ${(e as Error).message}`);
    }
    approvals.reload();
  };
  return (
    <Section title="Agents">
      <ErrorLine error={agents.error ?? approvals.error} />
      <table data-testid="agents">
        <Head cols={['Agent', 'Name', 'Customer', 'Connected', 'Paused', 'Created']} />
        <tbody>
          {agents.data?.data.map((a) => (
            <tr key={a.id}>
              <td>
                <code>{a.id}</code>
              </td>
              <td>{str(a.name)}</td>
              <td>
                <code>{str(a.customerId)}</code>
              </td>
              <td>{a.isConnected ? 'yes' : 'no'}</td>
              <td>{a.isPaused ? 'yes' : 'no'}</td>
              <td>
                <Time value={a.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager list={agents} label="agents" />
      <h3>Pending approvals</h3>
      {note ? (
        <p class="note" data-testid="approval-note">
          {note}
        </p>
      ) : null}
      <table data-testid="approvals">
        <thead>
          <tr>
            <th>Action</th>
            <th>Type</th>
            <th>Agent</th>
            <th>Status</th>
            <th>Created</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {approvals.data?.data.map((a) => (
            <tr key={a.id} data-id={a.id}>
              <td>
                <code>{a.id}</code>
              </td>
              <td>{str(a.type)}</td>
              <td>
                <code>{str(a.agentId)}</code>
              </td>
              <td>
                <Status value={a.status} />
              </td>
              <td>
                <Time value={a.createdAt} />
              </td>
              <td>
                <button type="button" onClick={() => decide(a, 'approve')}>
                  Approve
                </button>{' '}
                <button type="button" onClick={() => decide(a, 'reject')}>
                  Reject
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager list={approvals} label="pending" />
    </Section>
  );
}
