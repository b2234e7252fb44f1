/**
 * The demo checkout page's script (runs in the browser). Step 1 tokenizes the
 * card with the publishable key through the library the API serves; step 2 hands
 * only the one-time token to "the merchant's server" (POST /demo/merchant/pay).
 */
import type * as Tokenize from '../../../client/tokenize.ts';
import { CARD_FIELDS as FIELDS, cardProblems, originProblem } from './card-checks.ts';
import type { CardField as Field, CardProblem } from './card-checks.ts';

interface CheckoutConfig {
  publishableKey: string;
  organizationId: string;
  locationId: string;
  scriptUrl: string;
  /** The publishable key's origins: the page says at once when it is open elsewhere. */
  allowedOrigins: string[];
}

const config = JSON.parse(byId('checkout-config').textContent ?? '{}') as CheckoutConfig;
const form = byId<HTMLFormElement>('card-form');
const submit = byId<HTMLButtonElement>('tokenize-button');
const payButton = byId<HTMLButtonElement>('pay-button');
let oneTimeToken: string | undefined;
const library = import(config.scriptUrl) as Promise<typeof Tokenize>;
const wrongOrigin = originProblem(location.origin, config.allowedOrigins);
if (wrongOrigin) showOriginNotice(wrongOrigin);

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void tokenizeCard();
});
payButton.addEventListener('click', () => void payWithToken());

async function tokenizeCard(): Promise<void> {
  clearErrors();
  byId('token-result').hidden = true;
  byId('paymethod-result').hidden = true;
  payButton.disabled = true;
  oneTimeToken = undefined;
  const value = (name: Field) => (byId<HTMLInputElement>(name).value ?? '').trim();
  const form = Object.fromEntries(FIELDS.map((name) => [name, value(name)])) as Record<Field, string>;
  // People type spaces and dashes; the API takes digits.
  form.account_number = form.account_number.replace(/[\s-]/g, '');
  const problems = cardProblems(form, new Date());
  if (problems.length > 0) {
    showFieldProblems(problems, []);
    return;
  }
  const card: Tokenize.CardDetails = {
    name_on_card: form.name_on_card,
    card_type: form.card_type,
    account_number: form.account_number,
    expire_month: form.expire_month,
    expire_year: form.expire_year,
  };
  if (form.card_verification_value) card.card_verification_value = form.card_verification_value;

  submit.disabled = true;
  setText('status', 'Tokenizing…');
  try {
    const { tokenize } = await library;
    const startedAt = performance.now();
    const token = await tokenize({ publishableKey: config.publishableKey, organizationId: config.organizationId, locationId: config.locationId, card });
    document.documentElement.dataset.tokenizeMs = String(Math.round(performance.now() - startedAt));
    oneTimeToken = token.one_time_token;
    setText('token-value', token.one_time_token);
    setText('token-expires', new Date(token.expires_at).toLocaleString());
    setText('token-last4', token.last_4_account_number);
    byId('token-result').hidden = false;
    setText('status', '');
    payButton.disabled = false;
    // The token stands for the card now: nothing sensitive stays in the form (or in the page's memory).
    byId<HTMLInputElement>('account_number').value = '';
    byId<HTMLInputElement>('card_verification_value').value = '';
    byId('token-heading').focus();
  } catch (error) {
    setText('status', '');
    showErrors(error as Tokenize.TokenizeError);
  } finally {
    submit.disabled = false;
  }
}

async function payWithToken(): Promise<void> {
  if (!oneTimeToken) return;
  const errorBox = byId('merchant-error');
  errorBox.hidden = true;
  payButton.disabled = true;
  setText('merchant-status', "Sending the token to the merchant's server…");
  try {
    const response = await fetch('/demo/merchant/pay', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ one_time_token: oneTimeToken, name_on_card: byId<HTMLInputElement>('name_on_card').value.trim() }),
    });
    const answer = (await response.json()) as {
      paymethod_token?: string;
      card?: { card_type?: string; expire_month?: number; expire_year?: number; name_on_card?: string; masked_account_number?: string };
      response?: { response_desc?: string };
    };
    if (!response.ok || !answer.paymethod_token) throw new Error(answer.response?.response_desc ?? `HTTP ${response.status}`);
    setText('paymethod-token', answer.paymethod_token);
    const card = answer.card ?? {};
    setText('paymethod-card', `${(card.card_type ?? '').toUpperCase()} · ${card.name_on_card ?? ''} · expires ${String(card.expire_month).padStart(2, '0')}/${card.expire_year}`);
    setText('paymethod-masked', card.masked_account_number ?? '');
    byId('paymethod-result').hidden = false;
    setText('merchant-status', '');
    oneTimeToken = undefined;
    byId('paymethod-heading').focus();
  } catch (error) {
    setText('merchant-status', '');
    errorBox.textContent = `The merchant's server could not save the card: ${(error as Error).message}`;
    errorBox.hidden = false;
    payButton.disabled = false;
  }
}

function showErrors(error: Tokenize.TokenizeError): void {
  const fieldProblems: CardProblem[] = [];
  const general: string[] = [];
  for (const item of error.errors?.length ? error.errors : [{ message: error.message }]) {
    const field = FIELDS.find((name) => item.field === `card.${name}`);
    if (field) fieldProblems.push({ field, message: item.message });
    else general.push(item.field ? `${item.field} ${item.message}` : item.message);
  }
  // A refused origin reads as FORBIDDEN, or as a network error where CORS hides the answer: say why.
  if ((error.response_code === 'FORBIDDEN' || error.response_code === 'NETWORK_ERROR') && wrongOrigin) {
    general.push(`open this page at ${config.allowedOrigins.join(' or ')} instead (see the note above)`);
  }
  showFieldProblems(fieldProblems, general.length > 0 ? [`${titleOf(error.response_code)}: ${general.join('; ')}`] : []);
}

/** Marks each failing field (inline, accessibly) and shows general messages above the form; focuses what to fix. */
function showFieldProblems(problems: readonly CardProblem[], general: readonly string[]): void {
  let first: HTMLElement | undefined;
  for (const { field, message: text } of problems) {
    const input = byId(field);
    const message = byId(`${field}-error`);
    message.textContent = `${labelOf(field)} ${text}.`;
    message.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    first ??= input;
  }
  const box = byId('form-error');
  if (general.length > 0) {
    box.textContent = general.join(' ');
    box.hidden = false;
  }
  // The field to fix, or the message saying why nothing can be fixed here.
  (first ?? box).focus();
}

function showOriginNotice(text: string): void {
  const notice = byId('origin-notice');
  const allowed = config.allowedOrigins[0];
  notice.textContent = `${text} `;
  if (allowed) {
    const link = document.createElement('a');
    link.href = `${allowed}${location.pathname}`;
    link.textContent = `Open the demo at ${allowed}${location.pathname}`;
    notice.append(link, '.');
  }
  notice.hidden = false;
}

function clearErrors(): void {
  byId('form-error').hidden = true;
  for (const field of FIELDS) {
    byId(field).removeAttribute('aria-invalid');
    const message = byId(`${field}-error`);
    message.hidden = true;
    message.textContent = '';
  }
}

function titleOf(code: string | undefined): string {
  switch (code) {
    case 'FORBIDDEN':
      return 'Not allowed from this site';
    case 'THROTTLED':
      return 'Too many attempts';
    case 'NETWORK_ERROR':
      return 'Could not reach the payment service';
    default:
      return 'Could not tokenize the card';
  }
}

function labelOf(field: Field): string {
  return document.querySelector(`label[for="${field}"]`)?.textContent ?? field;
}

function setText(id: string, text: string): void {
  byId(id).textContent = text;
}

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}
