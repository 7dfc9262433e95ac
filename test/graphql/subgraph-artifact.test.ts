import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { graphql, type GraphQLSchema, isObjectType, print, printSchema } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFacadeSchema, domainResolvers, SCHEMA_DIR } from '../../src/graphql/schema.js';
import { loadTypeDefs, readSdlFiles } from '../../src/graphql/sdl-files.js';
import { ROUTE_SETTINGS } from '../../src/domain/facade/upstream-routes.js';
import { facadeSurface } from '../../src/graphql/facade-fields.js';
import { facadeTypeDefs } from '../../src/graphql/facade-schema.js';
import {
  ARTIFACT_FILE,
  FACADE_ARTIFACTS_FILE,
  facadeSdlHash,
  readSubgraphArtifact,
  schemaFromArtifact,
  sdlHashOf,
} from '../../src/graphql/subgraph-artifact.js';
import { writeSubgraphArtifact } from '../../src/graphql/subgraph-artifact-maker.js';

/** The SDL files copied into a folder of the test's own, where the build would write the artifact. */
const dir = mkdtempSync(join(tmpdir(), 'pgw-sdl-'));
for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.graphql')))
  cpSync(join(SCHEMA_DIR, file), join(dir, file));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const serviceSdl = async (schema: GraphQLSchema) =>
  (await graphql({ schema, source: '{ _service { sdl } }' })).data?._service as { sdl: string };

describe("the build's subgraph artifact", () => {
  writeSubgraphArtifact(dir);
  const artifact = readSubgraphArtifact(join(dir, ARTIFACT_FILE), sdlHashOf(readSdlFiles(dir)))!;
  const fromArtifact = schemaFromArtifact(artifact, domainResolvers());
  const validated = buildSubgraphSchema({ typeDefs: loadTypeDefs(dir), resolvers: domainResolvers() });

  it('makes the schema buildSubgraphSchema makes: types, applied directives and resolvers', () => {
    expect(printSchema(fromArtifact)).toBe(printSchema(validated));
    for (const [name, type] of Object.entries(validated.getTypeMap())) {
      if (name.startsWith('__')) continue;
      const twin = fromArtifact.getType(name)!;
      // Applied directives (the access rules among them) live on the AST nodes.
      expect(twin.astNode && print(twin.astNode), name).toBe(type.astNode && print(type.astNode));
      if (!isObjectType(type) || !isObjectType(twin)) continue;
      for (const [field, config] of Object.entries(type.getFields())) {
        if (name === 'Query' && (field === '_service' || field === '_entities')) continue;
        expect(twin.getFields()[field]!.resolve, `${name}.${field}`).toBe(config.resolve);
        expect(print(twin.getFields()[field]!.astNode!), `${name}.${field}`).toBe(print(config.astNode!));
      }
    }
  });

  it('answers _service with the same SDL, and resolves _Entity by __typename', async () => {
    expect(await serviceSdl(fromArtifact)).toEqual(await serviceSdl(validated));
    const entity = fromArtifact.getType('_Entity') as unknown as { resolveType: (v: unknown) => unknown };
    expect(entity.resolveType({ __typename: 'User' })).toBe('User');
  });

  it('is ignored once an SDL file changes, and when it cannot be read', () => {
    const changed = [...readSdlFiles(dir)];
    changed[0] += '\n# edited\n';
    expect(readSubgraphArtifact(join(dir, ARTIFACT_FILE), sdlHashOf(changed))).toBeUndefined();
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{');
    expect(readSubgraphArtifact(broken, artifact.sdlHash)).toBeUndefined();
    expect(readSubgraphArtifact(join(dir, 'absent.json'), artifact.sdlHash)).toBeUndefined();
  });
});

describe("the build's artifacts of the graphs a facade serves", () => {
  writeSubgraphArtifact(dir);
  for (const routes of ROUTE_SETTINGS)
    it(`makes, for UPSTREAM_ROUTES=${routes}, the schema buildSubgraphSchema makes from the cut SDL`, async () => {
      const typeDefs = facadeTypeDefs(loadTypeDefs(dir), facadeSurface(routes));
      const artifact = readSubgraphArtifact(join(dir, FACADE_ARTIFACTS_FILE), facadeSdlHash(typeDefs));
      expect(artifact, routes).toBeDefined();
      const fromArtifact = schemaFromArtifact(artifact!, domainResolvers());
      const validated = buildSubgraphSchema({ typeDefs, resolvers: domainResolvers() });
      expect(printSchema(fromArtifact)).toBe(printSchema(validated));
      expect(fromArtifact.getType('_Entity')).toBeUndefined();
      expect(await serviceSdl(fromArtifact)).toEqual(await serviceSdl(validated));
      for (const [name, type] of Object.entries(validated.getTypeMap())) {
        if (name.startsWith('__') || !isObjectType(type)) continue;
        const twin = fromArtifact.getType(name);
        if (!isObjectType(twin)) throw new Error(`${name} is not an object type in the artifact's schema`);
        for (const [field, config] of Object.entries(type.getFields())) {
          if (name === 'Query' && field === '_service') continue;
          expect(twin.getFields()[field]!.resolve, `${name}.${field}`).toBe(config.resolve);
        }
      }
    });

  it('keys each by its cut SDL: the service SDL does not find one', () => {
    expect(readSubgraphArtifact(join(dir, FACADE_ARTIFACTS_FILE), sdlHashOf(readSdlFiles(dir)))).toBeUndefined();
  });
});

/**
 * In the bundle, graphql-js is the bundle's own copy, and Federation's build from node_modules
 * uses the package's: a schema it makes is not one to the bundle's code. So a facade without the
 * build's artifact of its graph cannot start there, and says why, where and what to run.
 */
describe('a facade whose graph has no artifact, where the validating build makes another graphql-js’s schema', () => {
  // The package's ES module copy: another graphql-js than the one this code was loaded with.
  const otherGraphql = () => import('graphql/index.mjs' as string) as Promise<typeof import('graphql')>;

  it('refuses to start, naming the artifact file, the graph’s hash and `npm run build`', async () => {
    const other = await otherGraphql();
    expect(other.GraphQLSchema).not.toBe((await import('graphql')).GraphQLSchema);
    const bare = mkdtempSync(join(tmpdir(), 'pgw-sdl-bare-'));
    try {
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.graphql')))
        cpSync(join(dir, file), join(bare, file));
      const surface = facadeSurface(ROUTE_SETTINGS[0]!);
      const hash = facadeSdlHash(facadeTypeDefs(loadTypeDefs(bare), surface));
      const build = ({ typeDefs }: { typeDefs: import('graphql').DocumentNode }) =>
        other.buildASTSchema(other.parse(print(typeDefs)), { assumeValid: true, assumeValidSDL: true }) as never;
      expect(() => buildFacadeSchema(surface, bare, build)).toThrow(
        new RegExp(
          `cut SDL hash ${hash}\\) in ${join(bare, FACADE_ARTIFACTS_FILE).replaceAll('.', '\\.')}.*Run \`npm run build\``,
        ),
      );
      // With the build's artifacts beside the SDL, the same start builds from them.
      writeSubgraphArtifact(bare);
      expect(buildFacadeSchema(surface, bare, build).getQueryType()).toBeDefined();
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
