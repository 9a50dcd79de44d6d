// A third party's first steps, written against a client generated from the live
// document with openapi-typescript and called with openapi-fetch: sign up without a
// key, list every pet by following `Link`, place an order with an Idempotency-Key (a
// retry replays it), and read a typed Error. `tsc --strict` must accept it as it is
// (no casts to `any`), and it must run against the server.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/petstore.js";

type ApiError = components["schemas"]["Error"];

const base = process.env.PETSTORE_API ?? "http://127.0.0.1:3013/api/v1";

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`client flow: ${what}`);
}

/// The next page's URL from `Link: <…>; rel="next"`, if any.
function nextPage(link: string | null): string | undefined {
  const match = link?.match(/<([^>]+)>;\s*rel="next"/);
  return match?.[1];
}

async function main(): Promise<void> {
  // 1. Sign up, anonymously: no key, and the empty SignUp ({}).
  const anonymous = createClient<paths>({ baseUrl: base });
  const signUp = await anonymous.POST("/keys", { body: {} });
  check(signUp.response.status === 201, `sign-up answered ${signUp.response.status}`);
  check(signUp.data !== undefined, "sign-up has a body");
  const key: string = signUp.data.key;
  check(key.startsWith("psk_") && signUp.data.plan === "free" && signUp.data.role === "customer", "a Free customer key");
  check(signUp.data.revokedAt === null, "revokedAt is sent, null while the key works");

  const client = createClient<paths>({ baseUrl: base, headers: { "X-API-Key": key } });

  // 2. Every pet, two at a time, following Link.
  const pets: components["schemas"]["Pet"][] = [];
  let page = await client.GET("/pets", { params: { query: { limit: 2 } } });
  for (;;) {
    check(page.data !== undefined, `a page of pets (${page.response.status})`);
    pets.push(...page.data);
    check(page.response.headers.get("x-ratelimit-limit") !== null, "rate-limit headers");
    const next = nextPage(page.response.headers.get("link"));
    if (next === undefined) break;
    const cursor = new URL(next, base).searchParams.get("cursor");
    check(cursor !== null, "the next page has a cursor");
    page = await client.GET("/pets", { params: { query: { limit: 2, cursor } } });
  }
  check(pets.length >= 3, `the demo catalog's pets, got ${pets.length}`);
  check(new Set(pets.map((pet) => pet.id)).size === pets.length, "no pet twice");

  // 3. An order with an Idempotency-Key; the retry gets the same order.
  const inStock: components["schemas"]["InventoryItem"][] = [];
  for (const pet of pets.filter((pet) => pet.status === "available")) {
    const stock = await client.GET("/store/inventory/{petId}", { params: { path: { petId: pet.id } } });
    if (stock.data && stock.data.quantity > 0) inStock.push(stock.data);
  }
  const target = inStock[0];
  check(target !== undefined, "a pet in stock");
  const order = { petId: target.petId, quantity: 1 };
  const idempotency = { header: { "Idempotency-Key": `client-flow-${Date.now()}` } };
  const first = await client.POST("/store/orders", { params: idempotency, body: order });
  check(first.response.status === 201 && first.data !== undefined, `placed (${first.response.status})`);
  check(first.response.headers.get("location") === `/api/v1/store/orders/${first.data.id}`, "Location names it");
  const retry = await client.POST("/store/orders", { params: idempotency, body: order });
  check(retry.data?.id === first.data.id, "the retry replays the first order");

  // 4. A typed Error.
  const refused = await client.POST("/store/orders", { body: { petId: target.petId, quantity: 0 } });
  check(refused.response.status === 422, `quantity 0 answered ${refused.response.status}`);
  const error: ApiError | undefined = refused.error;
  check(error !== undefined && error.code === "validation_failed" && error.status === 422, "a validation_failed Error");
  const missing = await client.GET("/store/orders/{orderId}", { params: { path: { orderId: 999_999 } } });
  check(missing.error?.code === "not_found", "a not_found Error");

  console.log(`client flow: signed up, read ${pets.length} pets by Link, order ${first.data.id} placed once, typed errors read`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
