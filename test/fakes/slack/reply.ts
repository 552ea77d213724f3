/** One Web API answer of the Slack stand-in: HTTP status, headers, body. */
export interface ApiReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
