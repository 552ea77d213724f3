/**
 * AWS SDK (Bedrock Runtime) exceptions as the status / type / message triple errors.ts classifies, so a
 * ThrottlingException takes the same retry / fallback / key-rotation road as an OpenAI or Anthropic 429.
 * Bedrock names its errors (`name`) and carries the HTTP status in `$metadata`; errors raised inside a
 * ConverseStream arrive with the same names (modelStreamErrorException and friends).
 */

/** Structurally the ApiFailure of errors.ts (kept here so the two modules do not import each other). */
export interface AwsFailure {
  status?: number;
  type?: string;
  code?: string;
  message: string;
  inner: Record<string, unknown>;
}

/** Exception name → status and the Anthropic-style type that errors.ts already understands. */
const AWS_ERRORS: Record<string, { status: number; type: string }> = {
  ThrottlingException: { status: 429, type: 'rate_limit_error' },
  ServiceQuotaExceededException: { status: 429, type: 'rate_limit_error' },
  ModelNotReadyException: { status: 429, type: 'rate_limit_error' },
  ServiceUnavailableException: { status: 503, type: 'api_error' },
  InternalServerException: { status: 500, type: 'api_error' },
  ModelStreamErrorException: { status: 424, type: 'api_error' },
  ModelErrorException: { status: 424, type: 'api_error' },
  ModelTimeoutException: { status: 408, type: 'timeout_error' },
  ValidationException: { status: 400, type: 'invalid_request_error' },
  AccessDeniedException: { status: 403, type: 'permission_error' },
  UnrecognizedClientException: { status: 403, type: 'authentication_error' },
  InvalidSignatureException: { status: 403, type: 'authentication_error' },
  ExpiredTokenException: { status: 403, type: 'authentication_error' },
  ResourceNotFoundException: { status: 404, type: 'not_found_error' },
};

export function awsFailureOf(err: unknown): AwsFailure | undefined {
  if (!(err instanceof Error) || !('$metadata' in err)) return undefined;
  const known = AWS_ERRORS[err.name];
  const metadata = (err as { $metadata?: { httpStatusCode?: number } }).$metadata;
  const status = metadata?.httpStatusCode ?? known?.status;
  if (!known && status === undefined) return undefined;
  return {
    status: known?.status ?? status,
    type: known?.type,
    code: err.name,
    message: `${err.name}: ${err.message}`,
    inner: {},
  };
}
