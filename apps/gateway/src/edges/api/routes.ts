/**
 * The OpenAI-compatible API on the admin HTTP server (ingress processes, when HERALD_API_KEYS is set):
 *   GET  /v1/models            the models Herald answers as: `herald` (the profile routes pick for the API) and
 *                              each agent profile by name; a request's `model` picks the profile
 *   POST /v1/chat/completions  Chat Completions, JSON or streamed (SSE)
 *   POST /v1/responses         the Responses API, JSON or streamed (its typed events)
 * One encapsulated context: its onRequest hook checks the key, its error handler answers in OpenAI's shape.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../support/logger.js';
import type { HeraldMetrics } from '../../support/ops/metrics.js';
import { chatCompletionJson, chatMeta, chatStreamFormat } from './chat-format.js';
import { ApiError, apiErrorHandler, sendApiError } from './errors.js';
import { ApiExchange } from './exchange.js';
import { apiAuth } from './keys.js';
import { parseChatCompletion, parseResponsesRequest, type ApiInput } from './requests.js';
import { responseJson, responseMeta, responsesStreamFormat } from './responses-format.js';
import { SseSink, type StreamFormat } from './sse.js';
import { DEFAULT_MODEL_ID, type ApiTurn, type ApiTurns } from './turns.js';
import type { ProfileTable } from '../../features/profiles/table.js';
import { DEFAULT_PROFILE } from '../../support/config/profile-names.js';

const MODELS_CREATED_S = Math.floor(Date.now() / 1000);
/** A stateless request carries its whole history: more room than the admin server's 1 MiB. */
const API_BODY_LIMIT = 8 * 1024 * 1024;

export interface ApiRoutesDeps {
  keys: readonly string[];
  turns: ApiTurns;
  metrics: HeraldMetrics;
  log: Logger;
  /** Requests still waiting when the server stops get this (503) instead of hanging. */
  shutdown: AbortSignal;
  /** The agent profiles: each is a model id. */
  profiles: ProfileTable;
}

/** How a request's answer is shaped: one wire format's JSON body and stream. */
interface Shape {
  json(answer: Parameters<typeof chatCompletionJson>[1]): Record<string, unknown>;
  stream(input: ApiInput): StreamFormat;
}

export async function mountApiRoutes(app: FastifyInstance, deps: ApiRoutesDeps): Promise<void> {
  await app.register(
    async (api) => {
      api.addHook('onRequest', apiAuth(deps.keys));
      api.setErrorHandler(apiErrorHandler);
      api.setNotFoundHandler((req, reply) =>
        sendApiError(reply, new ApiError(404, `Unknown request URL: ${req.method} ${req.url.split('?')[0]}.`, 'invalid_request_error', 'unknown_url')),
      );

      api.get('/models', async () => ({ object: 'list', data: modelIds(deps.profiles).map(modelJson) }));
      api.get<{ Params: { model: string } }>('/models/:model', async (req) => {
        checkModel(deps.profiles, req.params.model, 'model');
        return modelJson(req.params.model);
      });

      api.post('/chat/completions', { bodyLimit: API_BODY_LIMIT }, async (req, reply) => {
        const input = parseChatCompletion(req.body, req.headers);
        const meta = chatMeta(input.model);
        return answer(req, reply, input, { json: (a) => chatCompletionJson(meta, a), stream: (i) => chatStreamFormat(meta, i.includeUsage) });
      });

      api.post('/responses', { bodyLimit: API_BODY_LIMIT }, async (req, reply) => {
        const input = parseResponsesRequest(req.body, req.headers);
        const meta = responseMeta(input.model);
        return answer(req, reply, input, { json: (a) => responseJson(meta, 'completed', a.text, a.usage), stream: () => responsesStreamFormat(meta) });
      });
    },
    { prefix: '/v1' },
  );

  async function answer(req: FastifyRequest, reply: FastifyReply, input: ApiInput, shape: Shape): Promise<unknown> {
    checkModel(deps.profiles, input.model, 'model');
    deps.metrics.messagesReceived.inc({ platform: 'api' });
    const format = input.stream ? shape.stream(input) : null;
    let sink: SseSink | null = null;
    const exchange = new ApiExchange((chunk) => sink?.text(chunk));
    const turn = await deps.turns.start(req.apiCaller!, input, exchange.handle);
    const log = deps.log.child({ requestId: turn.requestId, sessionId: turn.session.id });
    const headers = sessionHeaders(turn);
    // The request ends without its answer: the message is taken back (a running turn stops like /stop, a waiting one
    // never runs), so a client that sends it again does not get it answered twice.
    const giveUp = (error: ApiError): void => {
      if (exchange.done) return;
      exchange.fail(error);
      turn.withdraw().catch((err: unknown) => log.warn({ err }, 'could not withdraw the message'));
    };
    const onClose = (): void => {
      if (reply.raw.writableFinished || exchange.done) return;
      log.info('API client disconnected; withdrawing its message');
      giveUp(new ApiError(499, 'client closed the request', 'invalid_request_error'));
    };
    reply.raw.on('close', onClose);
    const onShutdown = (): void => giveUp(new ApiError(503, 'The server is shutting down; send the request again.', 'server_error', 'shutting_down', null, 1));
    deps.shutdown.addEventListener('abort', onShutdown, { once: true });
    try {
      if (format) {
        sink = new SseSink(reply, format, headers);
        await sink.run(exchange.outcome, () => exchange.streamed.text);
        return reply;
      }
      const o = await exchange.outcome;
      if (!o.ok) return await sendApiError(reply.headers(headers), o.error);
      return reply.headers(headers).send(shape.json(o.answer));
    } finally {
      deps.shutdown.removeEventListener('abort', onShutdown);
      await turn.close().catch((err: unknown) => log.warn({ err }, 'closing an API request failed'));
    }
  }
}

function modelJson(id: string): Record<string, unknown> {
  return { id, object: 'model', created: MODELS_CREATED_S, owned_by: 'herald' };
}

/** `herald`, then each named profile (`default` is accepted too, but not listed: `herald` is it unless routed). */
function modelIds(profiles: ProfileTable): string[] {
  return [DEFAULT_MODEL_ID, ...profiles.names().filter((n) => n !== DEFAULT_PROFILE)];
}

function checkModel(profiles: ProfileTable, model: string, param: string): void {
  if (model !== DEFAULT_MODEL_ID && !profiles.has(model)) {
    throw new ApiError(
      404,
      `The model '${model}' does not exist. Models: ${modelIds(profiles).join(', ')} (GET /v1/models).`,
      'invalid_request_error',
      'model_not_found',
      param,
    );
  }
}

function sessionHeaders(turn: ApiTurn): Record<string, string> {
  const h: Record<string, string> = { 'x-herald-session-id': turn.session.id };
  if (turn.sessionName !== null && /^[\x20-\x7e]*$/.test(turn.sessionName)) h['x-herald-session'] = turn.sessionName;
  return h;
}
