/**
 * The Corridor dashboard: sign in with a platform's API token (client id + secret) or with the
 * operator token (then pick a platform), and browse the platform's data through the public API.
 * Views are hash routes, so a reload keeps the view; the session lives in sessionStorage only.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, loadSession, type PageOf, type Session, saveSession, type Wire } from './api.ts';
import { usePolled } from './hooks.ts';
import { ErrorLine, str } from './ui.tsx';
import { ExternalAccounts, InternalAccounts } from './views/accounts.tsx';
import { Agents } from './views/agents.tsx';
import { Customers } from './views/customers.tsx';
import { Sandbox } from './views/sandbox.tsx';
import { Transactions } from './views/transactions.tsx';
import { Webhooks } from './views/webhooks.tsx';
import './style.css';

const VIEWS = {
  customers: { label: 'Customers', View: Customers },
  accounts: { label: 'Internal accounts', View: InternalAccounts },
  external: { label: 'External accounts', View: ExternalAccounts },
  transactions: { label: 'Transactions', View: Transactions },
  webhooks: { label: 'Webhooks', View: Webhooks },
  agents: { label: 'Agents', View: Agents },
  sandbox: { label: 'Sandbox', View: Sandbox },
} as const;
type ViewName = keyof typeof VIEWS;

const viewOf = (hash: string): ViewName => {
  const name = hash.replace(/^#\/?/, '');
  return Object.hasOwn(VIEWS, name) ? (name as ViewName) : 'customers';
};

function useHashView(): ViewName {
  const [view, setView] = useState(viewOf(location.hash));
  useEffect(() => {
    const on = () => setView(viewOf(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return view;
}

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession());
  const update = (s: Session | undefined) => {
    saveSession(s);
    setSession(s);
  };
  if (!session) return <SignIn onSignedIn={update} />;
  if (session.mode === 'operator' && !session.platformId)
    return (
      <PlatformPicker
        s={session}
        onPick={(id, name) => update({ ...session, platformId: id, platformName: name })}
        onSignOut={() => update(undefined)}
      />
    );
  return <Shell s={session} onChange={update} />;
}

function Shell({ s, onChange }: { s: Session; onChange: (s: Session | undefined) => void }) {
  const view = useHashView();
  const { View } = VIEWS[view];
  return (
    <div class="shell">
      <header>
        <h1>Corridor</h1>
        <span class="platform" data-testid="platform-name">
          {s.platformName}
        </span>
        {s.mode === 'operator' ? (
          <button type="button" onClick={() => onChange({ ...s, platformId: undefined, platformName: '' })}>
            Switch platform
          </button>
        ) : null}
        <button type="button" onClick={() => onChange(undefined)}>
          Sign out
        </button>
      </header>
      <nav>
        {(Object.keys(VIEWS) as ViewName[]).map((v) => (
          <a key={v} href={`#/${v}`} class={v === view ? 'active' : ''} aria-current={v === view ? 'page' : undefined}>
            {VIEWS[v].label}
          </a>
        ))}
      </nav>
      <main>
        {/* A new platform (operator switch) or view starts fresh: no state carried over. */}
        <View key={`${s.mode === 'operator' ? s.platformId : s.clientId}:${view}`} s={s} />
      </main>
    </div>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [mode, setMode] = useState<'platform' | 'operator'>('platform');
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      if (mode === 'platform') {
        const s: Session = { mode, clientId: clientId.trim(), secret, platformName: '' };
        const config = await get<Wire>(s, '/config');
        onSignedIn({ ...s, platformName: str(config.umaDomain ?? config.id) });
      } else {
        const s: Session = { mode, token: token.trim(), platformId: undefined, platformName: '' };
        await get<PageOf<Wire>>(s, '/_admin/platforms', { limit: 1 });
        onSignedIn(s);
      }
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'Those credentials were not accepted.'
          : `Sign-in failed: ${(err as Error).message}`,
      );
    }
  };
  return (
    <form class="signin" onSubmit={submit}>
      <h1>Corridor dashboard</h1>
      <div class="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={mode === 'platform'} onClick={() => setMode('platform')}>
          API token
        </button>
        <button type="button" role="tab" aria-selected={mode === 'operator'} onClick={() => setMode('operator')}>
          Operator token
        </button>
      </div>
      {mode === 'platform' ? (
        <>
          <label>
            Client id
            <input name="clientId" autoComplete="username" value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} required />
          </label>
          <label>
            Client secret
            <input
              name="clientSecret"
              type="password"
              autoComplete="current-password"
              value={secret}
              onInput={(e) => setSecret(e.currentTarget.value)}
              required
            />
          </label>
        </>
      ) : (
        <label>
          Operator token (CORRIDOR_ADMIN_TOKEN)
          <input name="adminToken" type="password" value={token} onInput={(e) => setToken(e.currentTarget.value)} required />
        </label>
      )}
      <button type="submit">Sign in</button>
      <ErrorLine error={error} />
      <p class="muted">Credentials stay in this tab (sessionStorage) and go only to this server.</p>
    </form>
  );
}

function PlatformPicker({ s, onPick, onSignOut }: { s: Session; onPick: (id: string, name: string) => void; onSignOut: () => void }) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const list = usePolled(() => get<PageOf<Wire>>(s, '/_admin/platforms', { limit: 50, cursor }), cursor ?? '');
  const next = list.data?.hasMore ? list.data.nextCursor : undefined;
  return (
    <div class="picker">
      <h1>Choose a platform</h1>
      <ErrorLine error={list.error} />
      <ul data-testid="platforms">
        {list.data?.data.map((p) => (
          <li key={p.id}>
            <button type="button" onClick={() => onPick(p.id, str(p.name))}>
              {str(p.name)}
            </button>{' '}
            <span class="muted">
              {str(p.environment)} · <code>{p.id}</code>
            </span>
          </li>
        ))}
      </ul>
      <div class="pager">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Previous
        </button>
        <button type="button" disabled={!next} onClick={() => next && setCursors((c) => [...c, next])}>
          Next
        </button>
      </div>
      <button type="button" onClick={onSignOut}>
        Sign out
      </button>
    </div>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
