/**
 * Writes the SDL a facade serves, for each route map (docs/facade.md), beside the service's own
 * SDL in src/graphql/generated/. test/graph/facade-sdl.test.ts fails while a committed file is stale.
 * Part of `npm run codegen`, whose output CI checks is committed.
 */
import { writeFileSync } from 'node:fs';
import { FACADE_SDL_FILES, facadeSdl } from '../src/graphql/facade-sdl.js';

for (const [routes, file] of Object.entries(FACADE_SDL_FILES)) {
  writeFileSync(file, facadeSdl(routes as keyof typeof FACADE_SDL_FILES));
  console.log(`wrote ${file}`);
}
