export const ROOT: string;
export const DIST: string;
export const SOURCES: string[];
export const STAMP: string;
export function buildDist(options?: { quiet?: boolean; outdir?: string }): Promise<void>;
export function distIsStale(): boolean;
export function buildBenchServer(script: string): Promise<string>;
