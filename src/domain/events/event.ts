import type { Environment } from '../auth/permissions.js';

/** An event as partners receive it, by webhook and by subscription alike. */
export interface EventEnvelope {
  id: string;
  type: string;
  /** Unix time, seconds. */
  created: number;
  data: Record<string, unknown>;
}

/** An event as stored: the envelope plus its owner and its place in commit order. */
export interface StoredEvent extends EventEnvelope {
  userId: string;
  environment: Environment;
  /** Commit-ordered position; null until the relay stamps it. */
  seq: number | null;
}

export interface NewEvent {
  type: string;
  userId: string;
  environment: Environment;
  data: Record<string, unknown>;
}
