/** Customers with their KYC/KYB status; a selected customer shows its internal accounts. */
import { useState } from 'preact/hooks';
import { get, type PageOf, type Session, type Wire } from '../api.ts';
import { usePaged, usePolled } from '../hooks.ts';
import { ErrorLine, Head, Money, Pager, Section, Status, str, Time } from '../ui.tsx';

const nameOf = (c: Wire) => str(c.fullName ?? (c.businessInfo as { legalName?: string } | undefined)?.legalName ?? c.platformCustomerId);

export function Customers({ s }: { s: Session }) {
  const list = usePaged<Wire>(s, '/customers');
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <Section title="Customers">
      <ErrorLine error={list.error} />
      <table data-testid="customers">
        <Head cols={['Name', 'Platform customer id', 'Type', 'KYC / KYB', 'Created']} />
        <tbody>
          {list.data?.data.map((c) => (
            <tr key={c.id} class={open === c.id ? 'selected' : ''} onClick={() => setOpen(open === c.id ? undefined : c.id)}>
              <td>
                <button type="button" class="link">
                  {nameOf(c)}
                </button>
              </td>
              <td>{str(c.platformCustomerId)}</td>
              <td>{str(c.customerType)}</td>
              <td>
                <Status value={c.kycStatus ?? c.kybStatus} />
              </td>
              <td>
                <Time value={c.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager list={list} label="customers" />
      {open ? <CustomerAccounts s={s} customerId={open} /> : null}
    </Section>
  );
}

function CustomerAccounts({ s, customerId }: { s: Session; customerId: string }) {
  const accounts = usePolled(() => get<PageOf<Wire>>(s, '/customers/internal-accounts', { customerId, limit: 100 }), customerId);
  return (
    <div class="detail" data-testid="customer-accounts">
      <h3>Accounts of {customerId}</h3>
      <ErrorLine error={accounts.error} />
      <table>
        <Head cols={['Account', 'Type', 'Available', 'Total']} />
        <tbody>
          {accounts.data?.data.map((a) => (
            <tr key={a.id}>
              <td>
                <code>{a.id}</code>
              </td>
              <td>{str(a.type)}</td>
              <td>
                <Money value={a.balance} />
              </td>
              <td>
                <Money value={a.totalBalance} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
