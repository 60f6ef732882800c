/** Internal accounts (the platform's and its customers') with balances, and the ledger postings behind one. */
import { useState } from 'preact/hooks';
import { get, type Session, type Wire } from '../api.ts';
import { usePaged, usePolled } from '../hooks.ts';
import { ErrorLine, Head, Money, Pager, Section, str, Time } from '../ui.tsx';

export function InternalAccounts({ s }: { s: Session }) {
  const platform = usePolled(() => get<{ data: Wire[] }>(s, '/platform/internal-accounts'), 'platform-accounts');
  const customers = usePaged<Wire>(s, '/customers/internal-accounts');
  const [open, setOpen] = useState<string | undefined>(undefined);
  const rows = (list: Wire[] | undefined) =>
    list?.map((a) => (
      <tr key={a.id} class={open === a.id ? 'selected' : ''} onClick={() => setOpen(open === a.id ? undefined : a.id)}>
        <td>
          <button type="button" class="link">
            {a.id}
          </button>
        </td>
        <td>{str(a.customerId ?? 'platform')}</td>
        <td>{str(a.type)}</td>
        <td>
          <Money value={a.balance} />
        </td>
        <td>
          <Money value={a.totalBalance} />
        </td>
      </tr>
    ));
  const head = <Head cols={['Account', 'Owner', 'Type', 'Available', 'Total']} />;
  return (
    <Section title="Internal accounts">
      <ErrorLine error={platform.error ?? customers.error} />
      <h3>Platform accounts</h3>
      <table data-testid="platform-accounts">
        {head}
        <tbody>{rows(platform.data?.data)}</tbody>
      </table>
      <h3>Customer accounts</h3>
      <table data-testid="customer-internal-accounts">
        {head}
        <tbody>{rows(customers.data?.data)}</tbody>
      </table>
      <Pager list={customers} label="accounts" />
      {open ? <Postings s={s} accountId={open} /> : null}
    </Section>
  );
}

function Postings({ s, accountId }: { s: Session; accountId: string }) {
  const list = usePaged<Wire>(s, `/dashboard/internal-accounts/${encodeURIComponent(accountId)}/postings`);
  return (
    <div class="detail" data-testid="postings">
      <h3>Ledger postings of {accountId}</h3>
      <ErrorLine error={list.error} />
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Kind</th>
            <th>Reference</th>
            <th>Bucket</th>
            <th class="num">Amount</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.data.map((p) => (
            <tr key={`${str(p.entryId)}#${str(p.seq)}`}>
              <td>
                <Time value={p.createdAt} />
              </td>
              <td>{str(p.kind)}</td>
              <td>
                <code>{str(p.referenceId)}</code>
              </td>
              <td>{str(p.bucket)}</td>
              <td class="num">
                {Number(p.amount) > 0 ? '+' : ''}
                {str(String(p.amount))} {str(p.currency)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager list={list} label="postings" />
    </div>
  );
}

export function ExternalAccounts({ s }: { s: Session }) {
  const platform = usePaged<Wire>(s, '/platform/external-accounts');
  const customers = usePaged<Wire>(s, '/customers/external-accounts');
  const rows = (list: Wire[] | undefined) =>
    list?.map((a) => {
      const info = (a.accountInfo ?? {}) as Record<string, unknown>;
      return (
        <tr key={a.id}>
          <td>
            <code>{a.id}</code>
          </td>
          <td>{str(a.customerId ?? 'platform')}</td>
          <td>{str(info.accountType)}</td>
          <td>{str(a.currency)}</td>
          <td>{str(info.accountNumber ?? info.iban ?? info.address ?? info.umaAddress ?? '')}</td>
          <td>{str(a.status)}</td>
        </tr>
      );
    });
  const head = <Head cols={['Account', 'Owner', 'Type', 'Currency', 'Identifier', 'Status']} />;
  return (
    <Section title="External accounts">
      <ErrorLine error={platform.error ?? customers.error} />
      <h3>Platform</h3>
      <table data-testid="platform-external-accounts">
        {head}
        <tbody>{rows(platform.data?.data)}</tbody>
      </table>
      <Pager list={platform} label="accounts" />
      <h3>Customers</h3>
      <table data-testid="customer-external-accounts">
        {head}
        <tbody>{rows(customers.data?.data)}</tbody>
      </table>
      <Pager list={customers} label="accounts" />
    </Section>
  );
}
