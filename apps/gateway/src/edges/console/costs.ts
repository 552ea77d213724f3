/**
 * Estimated spend as the console shows it. A model Herald has no price for records $0 however much it is used, so
 * such a figure reads "price unknown" (with how to set a price) instead of a $0.0000 that looks like free.
 */
import type { PriceTable } from '../../features/budgets/prices.js';
import { html, type Html } from './html.js';
import { usd } from './layout.js';

/** Where each "price unknown" points: the hint below the table. */
const PRICE_HINT_ID = 'price-hint';

/** Which models have a price: HERALD_PRICES over the built-in table (the same table turns are priced with). */
export type Priced = (model: string) => boolean;

export function pricedBy(prices: PriceTable): Priced {
  return (model) => prices.priceOf(model) !== undefined;
}

/** True when the model is named and no price table knows it (a session without a model spent nothing). */
function unpriced(priced: Priced, model: string | null): boolean {
  return model !== null && !priced(model);
}

/** A cost cell: the dollars, or "price unknown" (plus any dollars side tasks on priced models added). */
export function costHtml(costUsd: number, model: string | null, priced: Priced): Html {
  if (!unpriced(priced, model)) return html`${usd(costUsd)}`;
  const known = costUsd > 0 ? `${usd(costUsd)} + ` : '';
  return html`${known}<a href="#${PRICE_HINT_ID}">price unknown</a>`;
}

/** The hint the "price unknown" cells link to, naming the models; nothing when every model has a price. */
export function priceHint(models: ReadonlyArray<string | null>, priced: Priced): Html | '' {
  const missing = [...new Set(models.filter((m): m is string => unpriced(priced, m)))];
  if (missing.length === 0) return '';
  const example = JSON.stringify({ [missing[0]]: { input: 0.5, output: 1.5 } });
  return html`<p class="notice" id="${PRICE_HINT_ID}">Price unknown for ${missing.join(', ')}: Herald has no price for ${missing.length === 1 ? 'this model' : 'these models'}, so ${missing.length === 1 ? 'its' : 'their'} spend is not counted (the tokens are).
Set one with <code>HERALD_PRICES</code> (USD per million tokens; <code>prices:</code> in herald.yaml), e.g. <code>HERALD_PRICES='${example}'</code>, and restart; turns after that are priced. A model you run yourself can be priced at 0.</p>`;
}
