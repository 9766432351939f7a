/**
 * The sign-in page: one form, no script and no inline style, so it is served under the
 * dashboard's strict policy (SIGN_IN_PAGE_POLICY). `refused` adds the line a wrong token gets;
 * it holds none of what was sent.
 */
export function signInPage({ refused }: { refused: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · job queue dashboard</title>
</head>
<body>
<main>
<h1>Job queue dashboard</h1>
<p>Paste the admin token (<code>EXAMPLE_ADMIN_TOKEN</code>; <code>npm start</code> prints it).</p>
${refused ? '<p id="sign-in-refused" role="alert">That is not the admin token.</p>\n' : ''}<form method="post" action="/sign-in">
<label>Admin token <input id="token" name="token" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
`;
}

/** Nothing but the form may load or run; the form posts back here only. */
export const SIGN_IN_PAGE_POLICY =
  "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
