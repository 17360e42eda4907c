// The operator token form. The token stays in this tab (sessionStorage).
import { useState } from 'preact/hooks';

export function Login({ error, onLogin }: { error: string | null; onLogin: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <form
      class="login"
      data-login
      onSubmit={(event) => {
        event.preventDefault();
        if (token.trim() !== '') onLogin(token.trim());
      }}
    >
      <h1>parkbench bench</h1>
      <p>
        Log in with an operator token (<code>parkbench admin operator add --name NAME</code>;{' '}
        <code>parkbench start</code> prints a link that logs in).
      </p>
      <label for="token">Operator token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="off"
        spellcheck={false}
        value={token}
        onInput={(event) => setToken(event.currentTarget.value)}
        required
      />
      <button type="submit">Log in</button>
      {error !== null && (
        <p class="error" role="alert" data-login-error>
          {error}
        </p>
      )}
    </form>
  );
}
