/**
 * The demo checkout page's script (runs in the browser). Step 1 tokenizes the
 * card with the publishable key through the library the API serves; step 2 hands
 * only the one-time token to "the merchant's server" (POST /demo/merchant/pay).
 */
import type * as Tokenize from '../../../client/tokenize.ts';

interface CheckoutConfig {
  publishableKey: string;
  organizationId: string;
  locationId: string;
  scriptUrl: string;
}

const FIELDS = ['name_on_card', 'card_type', 'account_number', 'expire_month', 'expire_year', 'card_verification_value'] as const;
type Field = (typeof FIELDS)[number];

const config = JSON.parse(byId('checkout-config').textContent ?? '{}') as CheckoutConfig;
const form = byId<HTMLFormElement>('card-form');
const submit = byId<HTMLButtonElement>('tokenize-button');
const payButton = byId<HTMLButtonElement>('pay-button');
let oneTimeToken: string | undefined;
const library = import(config.scriptUrl) as Promise<typeof Tokenize>;

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
  const card: Tokenize.CardDetails = {
    name_on_card: value('name_on_card'),
    card_type: value('card_type'),
    // People type spaces and dashes; the API takes digits.
    account_number: value('account_number').replace(/[\s-]/g, ''),
    expire_month: value('expire_month'),
    expire_year: value('expire_year'),
  };
  if (value('card_verification_value')) card.card_verification_value = value('card_verification_value');

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
    // The number stays on screen for the shopper to correct; the merchant never receives it.
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
      body: JSON.stringify({ one_time_token: oneTimeToken }),
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
  const general: string[] = [];
  let first: HTMLElement | undefined;
  for (const item of error.errors?.length ? error.errors : [{ message: error.message }]) {
    const field = FIELDS.find((name) => item.field === `card.${name}`);
    if (!field) {
      general.push(item.field ? `${item.field} ${item.message}` : item.message);
      continue;
    }
    const input = byId(field);
    const message = byId(`${field}-error`);
    message.textContent = `${labelOf(field)} ${item.message}.`;
    message.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    first ??= input;
  }
  const box = byId('form-error');
  if (general.length > 0) {
    box.textContent = `${titleOf(error.response_code)}: ${general.join('; ')}`;
    box.hidden = false;
  }
  // The field to fix, or the message saying why nothing can be fixed here.
  (first ?? box).focus();
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
