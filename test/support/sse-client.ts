import { IncomingMessage, request as httpRequest } from 'node:http';

/** One Server-Sent Event as a test reads it. */
export interface SseMessage<T = unknown> {
  event: string;
  data: T;
}

/**
 * A real HTTP client of a Server-Sent Events stream, over a socket: its messages as they come,
 * its status and headers, and whether the server ended it.
 */
export class SseClient<T = unknown> {
  readonly messages: Array<SseMessage<T>> = [];
  ended = false;
  status: number | undefined;
  headers: IncomingMessage['headers'] = {};
  private buffer = '';
  private response: IncomingMessage | undefined;
  private readonly request;

  constructor(url: string, headers: Record<string, string>) {
    this.request = httpRequest(url, { headers }, (res) => {
      this.response = res;
      this.status = res.statusCode;
      this.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.read(chunk));
      res.on('end', () => (this.ended = true));
    });
    this.request.on('error', () => undefined); // a disconnect we made ourselves
    this.request.end();
  }

  /** Messages are separated by a blank line; each has `event:` and `data:` lines. */
  private read(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .find((line) => line.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      const data = field('data');
      if (data !== undefined) {
        this.messages.push({ event: field('event') ?? 'message', data: JSON.parse(data) as T });
      }
    }
  }

  /** The names of the events received, in order. */
  get events(): string[] {
    return this.messages.map((message) => message.event);
  }

  of(event: string): Array<SseMessage<T>> {
    return this.messages.filter((message) => message.event === event);
  }

  /** The client goes away mid-stream. */
  disconnect(): void {
    this.response?.destroy();
    this.request.destroy();
  }
}
