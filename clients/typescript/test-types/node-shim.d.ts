// The Node declarations the client names (index.d.ts and, under checkJs, the JavaScript), so
// that tsc checks them on a machine without @types/node (Debian packages none). Only for these
// checks: a project using the client has @types/node.
declare module 'node:child_process' {
  interface Readable {
    on(event: 'data', listener: (chunk: Uint8Array) => void): this;
    on(event: 'end' | 'close', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    pause(): this;
    resume(): this;
  }
  interface Writable {
    write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean;
    end(): this;
    on(event: 'error', listener: (error: Error) => void): this;
    once(event: 'drain' | 'close' | 'finish', listener: () => void): this;
    readonly writableLength: number;
    readonly destroyed: boolean;
  }
  export interface ChildProcess {
    readonly pid?: number;
    readonly stdin: Writable | null;
    readonly stdout: Readable | null;
    readonly stderr: Readable | null;
    kill(signal?: NodeJS.Signals | number): boolean;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: 'close' | 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  }
  export function spawn(
    command: string,
    args?: readonly string[],
    options?: {
      env?: Record<string, string | undefined>;
      cwd?: string;
      stdio?: readonly ('pipe' | 'inherit' | 'ignore')[];
      windowsHide?: boolean;
    },
  ): ChildProcess;
}

declare namespace NodeJS {
  type Signals = 'SIGTERM' | 'SIGINT' | 'SIGKILL' | 'SIGHUP' | 'SIGUSR1' | 'SIGUSR2';
  type Timeout = ReturnType<typeof setTimeout>;
}

declare var process: { env: Record<string, string | undefined> };

// Node's macrotask queue, which the Mirror's `coalesce: 'task'` renders on (src/coalesce.js).
declare function setImmediate(callback: () => void): unknown;

interface Buffer extends Uint8Array {
  toString(encoding?: 'utf8'): string;
}
declare var Buffer: {
  from(text: string): Buffer;
  concat(chunks: readonly Uint8Array[]): Buffer;
};
