// openai_client.mjs drives a running `runner serve` with the official openai npm package (the
// version pinned in package-lock.json) and prints one line per check, "ok NAME" or
// "not ok NAME: WHY", then exits 1 if any check failed. apps/runner's TestClients starts the
// server, runs this script and reports each line as a test of its own.
//
//   CARVE_URL=http://127.0.0.1:PORT/v1 CARVE_API_KEY=KEY CARVE_CASE='{...}' node openai_client.mjs
//
// CARVE_CASE is JSON: {"model": NAME, "prompts": [[ids], [ids]], "tokens": [[ids], [ids]],
// "max_tokens": N, "context": N}, where tokens are `runner generate`'s greedy tokens for the
// prompts. The server must have 2 slots and a queue of 1, so that concurrent requests of two
// prompts each overload it.
//
// Install the client once with `npm ci --ignore-scripts` here (tools/setup.sh does).
import OpenAI from 'openai';

const url = process.env.CARVE_URL;
const key = process.env.CARVE_API_KEY;
const c = JSON.parse(process.env.CARVE_CASE || '{}');
if (!url || !key || !c.model) {
  console.error('openai_client: set CARVE_URL, CARVE_API_KEY and CARVE_CASE (see the comment at the top)');
  process.exit(2);
}
const client = new OpenAI({ baseURL: url, apiKey: key, maxRetries: 0, timeout: 60_000 });

let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${name}: ${String(e && e.stack || e).split('\n').slice(0, 3).join(' | ')}`);
  }
}

function equal(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

// rejects runs fn, which must fail with an APIError of status.
async function rejects(status, fn) {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    equal(e.status, status, `status (${e.message})`);
    return e;
  }
  throw new Error(`succeeded, want HTTP ${status}`);
}

const greedy = { model: c.model, max_tokens: c.max_tokens, temperature: 0 };

await check('models.list', async () => {
  const page = await client.models.list();
  equal(page.data.map((m) => m.id), [c.model], 'model ids');
});

await check('completion equals runner generate', async () => {
  const r = await client.completions.create({ ...greedy, prompt: c.prompts[0] });
  equal(r.object, 'text_completion', 'object');
  equal(r.choices.length, 1, 'choices');
  equal(r.choices[0].token_ids, c.tokens[0], 'token_ids');
  equal(r.choices[0].finish_reason, 'length', 'finish_reason');
  equal(r.usage, { prompt_tokens: c.prompts[0].length, completion_tokens: c.max_tokens,
    total_tokens: c.prompts[0].length + c.max_tokens }, 'usage');
});

await check('batched completion equals runner generate', async () => {
  const r = await client.completions.create({ ...greedy, prompt: c.prompts });
  equal(r.choices.map((ch) => ch.index), [0, 1], 'indices');
  equal(r.choices.map((ch) => ch.token_ids), c.tokens, 'token_ids');
});

await check('stream with include_usage', async () => {
  const stream = await client.completions.create({ ...greedy, prompt: c.prompts, stream: true,
    stream_options: { include_usage: true } });
  const got = [[], []], finish = [null, null];
  let usage = null, after = 0;
  for await (const chunk of stream) {
    if (usage) after++;
    if (chunk.usage) {
      usage = chunk.usage;
      equal(chunk.choices, [], 'the usage chunk\'s choices');
      continue;
    }
    for (const ch of chunk.choices) {
      got[ch.index].push(...ch.token_ids);
      if (ch.finish_reason) finish[ch.index] = ch.finish_reason;
    }
  }
  equal(got, c.tokens, 'streamed token_ids');
  equal(finish, ['length', 'length'], 'finish_reason');
  equal(after, 0, 'chunks after the usage chunk');
  const p = c.prompts[0].length + c.prompts[1].length;
  equal(usage, { prompt_tokens: p, completion_tokens: 2 * c.max_tokens, total_tokens: p + 2 * c.max_tokens }, 'usage');
});

await check('stop token id', async () => {
  const stop = c.tokens[0][3];
  const r = await client.completions.create({ ...greedy, prompt: c.prompts[0], stop_token_ids: [stop] });
  equal(r.choices[0].finish_reason, 'stop', 'finish_reason');
  equal(r.choices[0].token_ids, c.tokens[0].slice(0, c.tokens[0].indexOf(stop)), 'token_ids');
});

await check('400 on an empty prompt', async () => {
  const e = await rejects(400, () => client.completions.create({ ...greedy, prompt: [] }));
  equal(e.type, 'invalid_request_error', 'error type');
});

await check('400 on a token outside the vocabulary', async () => {
  await rejects(400, () => client.completions.create({ ...greedy, prompt: [1, 1 << 30] }));
});

await check('400 naming the context', async () => {
  const e = await rejects(400, () => client.completions.create({ ...greedy, prompt: c.prompts[0], max_tokens: c.context }));
  equal(e.type, 'context_length_exceeded', 'error type');
  if (!e.message.includes(`context of ${c.context}`)) throw new Error(`message ${JSON.stringify(e.message)} does not name the context`);
});

await check('400 on a bad temperature', async () => {
  await rejects(400, () => client.completions.create({ ...greedy, prompt: c.prompts[0], temperature: -1 }));
});

await check('401 with a wrong key', async () => {
  const wrong = new OpenAI({ baseURL: url, apiKey: 'not-' + key, maxRetries: 0 });
  const e = await rejects(401, () => wrong.completions.create({ ...greedy, prompt: c.prompts[0] }));
  equal(e.type, 'authentication_error', 'error type');
});

// Each request holds two of the server's three places (2 slots, a queue of 1), so any two that
// overlap overload it. Generation on the fixture is quick, so the burst is tried a few times.
await check('429 under overload, with Retry-After', async () => {
  for (let round = 0; round < 5; round++) {
    const results = await Promise.allSettled(Array.from({ length: 32 }, async () => {
      const stream = await client.completions.create({ ...greedy, prompt: c.prompts, stream: true });
      const got = [[], []];
      for await (const chunk of stream) for (const ch of chunk.choices) got[ch.index].push(...ch.token_ids);
      return got;
    }));
    let limited = 0;
    for (const r of results) {
      if (r.status === 'fulfilled') {
        equal(r.value, c.tokens, 'an admitted stream\'s token_ids');
      } else if (r.reason instanceof OpenAI.RateLimitError) {
        equal(r.reason.headers.get('retry-after'), '1', 'Retry-After');
        limited++;
      } else {
        throw r.reason;
      }
    }
    if (limited > 0 && limited < results.length) return;
  }
  throw new Error('5 bursts of 32 concurrent requests: none was refused with 429 (or all were)');
});

process.exit(failed ? 1 : 0);
