/**
 * The text a streaming client sees. OpenAI's streams only ever append, while a turn's text can be taken back: a
 * model call retried or replaced by a fallback, a turn run again by another worker after a crash, a reply that
 * differs from what was streamed (an error text, a reply recorded by an earlier run). This keeps what the client
 * was shown consistent with the turn: text identical to what was already shown is not sent again, text that
 * continues it is sent from where it stopped, and text that differs starts after a blank line.
 *
 * A turn that calls tools streams each model response in turn (the text before a tool call included), separated
 * by a blank line, as Hermes' API does; the reply is the last response.
 */
const BREAK = '\n\n';

export class StreamedText {
  /** Everything sent to the client. */
  private sentAll = '';
  /** What the client was shown of the current model response. */
  private shown = '';
  /** The current model response's real text so far. */
  private actual = '';
  /** The next text starts a new response (after tools ran), set off from what came before. */
  private newResponse = false;

  get text(): string {
    return this.sentAll;
  }

  delta(text: string): string {
    this.actual += text;
    return this.emit(this.actual);
  }

  /** The current response's text is void (a retry, a fallback, a new run of the turn): its replacement follows. */
  restart(): void {
    this.actual = '';
  }

  /** A tool ran: what comes next is a new model response. */
  toolStarted(): void {
    if (this.shown !== '' || this.actual !== '') this.newResponse = true;
    this.shown = '';
    this.actual = '';
  }

  /** The reply: whatever the client has not been shown of it. */
  final(reply: string): string {
    return this.emit(reply);
  }

  private emit(target: string): string {
    let out = '';
    if (this.shown.startsWith(target)) return '';
    if (target.startsWith(this.shown)) out = target.slice(this.shown.length);
    else out = BREAK + target;
    if (this.newResponse) {
      out = this.sentAll === '' ? out : BREAK + out;
      this.newResponse = false;
    }
    this.shown = target;
    this.sentAll += out;
    return out;
  }
}
