// The sandbox payment page: one self-contained HTML document (inline CSS, no
// scripts, no external assets) that works in a phone's web view. Every value
// is escaped where it is written.
import type { PaymentState } from './repository.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => `&#${char.charCodeAt(0)};`);
}

export interface PageModel {
  title: string;
  /** One sentence under the title. */
  message: string;
  parkingName?: string;
  amount?: string;
  currency?: string;
  state?: PaymentState;
  /** Show the card form (Pay and Decline). */
  form: boolean;
  /** Already checked by safeReturnUrl. */
  returnUrl?: string | undefined;
  /** Previous card input to show again after a refusal (never the number in full). */
  expiry?: string;
}

const STYLE = `
body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:1.5rem;background:#f4f5f7;color:#1c1e21}
main{max-width:26rem;margin:0 auto;background:#fff;border-radius:12px;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.3rem;margin:0 0 .5rem}p{line-height:1.4}.amount{font-size:2rem;font-weight:600;margin:.5rem 0}
.state{display:inline-block;padding:.15rem .6rem;border-radius:1rem;background:#e8eaed;font-size:.85rem}
.paid{background:#d4f5dd}.declined{background:#fde2e1}label{display:block;margin:.8rem 0 .3rem;font-size:.9rem}
input{width:100%;box-sizing:border-box;font-size:1.1rem;padding:.6rem;border:1px solid #c4c7cc;border-radius:8px}
.buttons{display:flex;gap:.6rem;margin-top:1.2rem}button{flex:1;font-size:1.05rem;padding:.75rem;border:0;border-radius:8px}
.pay{background:#1a73e8;color:#fff}.decline{background:#e8eaed}.hint{font-size:.8rem;color:#5f6368}a{color:#1a73e8}`;

export function renderPage(model: PageModel): string {
  const parts: string[] = [];
  if (model.parkingName !== undefined) parts.push(`<p>${escapeHtml(model.parkingName)}</p>`);
  if (model.amount !== undefined && model.currency !== undefined) {
    parts.push(`<div class="amount">${escapeHtml(model.amount)} ${escapeHtml(model.currency)}</div>`);
  }
  if (model.state !== undefined)
    parts.push(`<span class="state ${model.state}" id="payment-state">${model.state}</span>`);
  parts.push(`<p id="message">${escapeHtml(model.message)}</p>`);
  if (model.form) {
    const returnField =
      model.returnUrl === undefined
        ? ''
        : `<input type="hidden" name="return_url" value="${escapeHtml(model.returnUrl)}">`;
    parts.push(`<form method="post">
<label for="card_number">Card number</label>
<input id="card_number" name="card_number" inputmode="numeric" autocomplete="off" placeholder="4242 4242 4242 4242" maxlength="23">
<label for="expiry">Expiry (MM/YY)</label>
<input id="expiry" name="expiry" inputmode="numeric" autocomplete="off" placeholder="12/30" maxlength="7" value="${escapeHtml(model.expiry ?? '')}">
${returnField}
<div class="buttons"><button class="pay" type="submit" name="action" value="pay">Pay</button><button class="decline" type="submit" name="action" value="decline">Decline</button></div>
</form>
<p class="hint">Sandbox: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined; any future expiry date.</p>`);
  }
  if (model.returnUrl !== undefined)
    parts.push(`<p><a id="return" href="${escapeHtml(model.returnUrl)}">Back to the app</a></p>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(model.title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(model.title)}</h1>
${parts.join('\n')}
</main></body></html>
`;
}
