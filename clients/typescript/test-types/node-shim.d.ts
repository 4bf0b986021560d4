// The few Node declarations index.d.ts names, so that tsc checks it on a machine without
// @types/node (Debian packages none). Only for these checks: a project using the client has
// @types/node.
declare module 'node:child_process' {
  export interface ChildProcess {
    readonly pid?: number;
    kill(signal?: NodeJS.Signals | number): boolean;
  }
}

declare namespace NodeJS {
  type Signals = 'SIGTERM' | 'SIGINT' | 'SIGKILL' | 'SIGHUP' | 'SIGUSR1' | 'SIGUSR2';
}
