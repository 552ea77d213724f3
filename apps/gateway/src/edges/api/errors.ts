/**
 * Errors in OpenAI's shape, so every OpenAI client raises the right exception with a readable message:
 * `{"error": {"message", "type", "param", "code"}}` with the matching status (the SDK maps 400 to BadRequestError,
 * 401 to AuthenticationError, 404 to NotFoundError, 429 to RateLimitError, 5xx to InternalServerError).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

export type ApiErrorType = 'invalid_request_error' | 'authentication_error' | 'rate_limit_error' | 'server_error' | 'not_found_error';

export interface ApiErrorBody {
  error: { message: string; type: ApiErrorType; param: string | null; code: string | null };
}

export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly status: number,
    message: string,
    readonly type: ApiErrorType,
    readonly code: string | null = null,
    readonly param: string | null = null,
    /** Seconds, sent as Retry-After (429, 503). */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }

  body(): ApiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (message: string, param: string | null = null, code: string | null = null): ApiError =>
  new ApiError(400, message, 'invalid_request_error', code, param);

export async function sendApiError(reply: FastifyReply, err: ApiError): Promise<void> {
  if (err.retryAfterS !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfterS))));
  if (err.status === 401) reply.header('www-authenticate', 'Bearer realm="herald-api"');
  await reply.code(err.status).type('application/json').send(err.body());
}

/**
 * The /v1 context's error handler: our own ApiErrors as they are; what fastify refuses before a handler runs (a
 * body that is not JSON, too large, of another content type) in the same shape with fastify's status; anything
 * else is a 500 whose details stay in the log.
 */
export async function apiErrorHandler(err: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (err instanceof ApiError) return sendApiError(reply, err);
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'request_too_large' : null;
    return sendApiError(reply, new ApiError(status, describeRefusal(err), 'invalid_request_error', code));
  }
  req.log.error({ err }, 'API request failed');
  return sendApiError(reply, new ApiError(500, 'The server had an error while processing your request.', 'server_error'));
}

function describeRefusal(err: FastifyError): string {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'We could not parse the JSON body of your request. The body must be a JSON object.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is empty; it must be a JSON object.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type: send the body as application/json.';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large.';
    default:
      return err.message;
  }
}
