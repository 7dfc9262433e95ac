import {
  type ConstDirectiveNode,
  type DefinitionNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  Kind,
  type TypeNode,
} from 'graphql';

/** What a facade serves: the fields kept on each listed object type, and on each listed input type. */
export interface FacadeSurface {
  fields: Readonly<Record<string, readonly string[]>>;
  inputFields: Readonly<Record<string, readonly string[]>>;
}

const ROOTS = ['Query', 'Mutation', 'Subscription'];

/**
 * The SDL a facade serves, cut from the service's: on each type the surface lists, only its listed
 * fields (a root type left with none goes, and so does an interface whose fields a type no longer
 * all has), then only the types those fields reach. Entities lose
 * `@key`: an entity is fetched by id, which the spec's upstream cannot answer. A generated client
 * then never compiles against a field that would always fail, and the subgraph's `_service { sdl }`
 * says the same (it is built from this document).
 */
export function facadeTypeDefs(document: DocumentNode, surface: FacadeSurface): DocumentNode {
  const interfaceFields = new Map<string, string[]>();
  for (const d of document.definitions)
    if (d.kind === Kind.INTERFACE_TYPE_DEFINITION || d.kind === Kind.INTERFACE_TYPE_EXTENSION)
      interfaceFields.set(d.name.value, [
        ...(interfaceFields.get(d.name.value) ?? []),
        ...(d.fields ?? []).map((f) => f.name.value),
      ]);
  const trimmed = document.definitions.flatMap((definition) => trim(definition, surface, interfaceFields));
  const reached = reachable(trimmed);
  return {
    kind: Kind.DOCUMENT,
    definitions: trimmed.filter((d) => !('name' in d) || d.name === undefined || isKept(d, reached)),
  };
}

function isKept(definition: DefinitionNode, reached: Set<string>): boolean {
  if (definition.kind === Kind.DIRECTIVE_DEFINITION) return true;
  return 'name' in definition && definition.name !== undefined && reached.has(definition.name.value);
}

function trim(
  definition: DefinitionNode,
  surface: FacadeSurface,
  interfaceFields: ReadonlyMap<string, readonly string[]>,
): DefinitionNode[] {
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION: {
      const name = definition.name.value;
      const kept = surface.fields[name];
      const fields = kept ? (definition.fields ?? []).filter((f) => kept.includes(f.name.value)) : definition.fields;
      // An extension, or a root type, left without fields has nothing to say.
      if ((fields ?? []).length === 0 && (definition.kind === Kind.OBJECT_TYPE_EXTENSION || ROOTS.includes(name)))
        return [];
      // A type cut below an interface's fields (a Deposit without its id) no longer implements it.
      const interfaces = kept
        ? definition.interfaces?.filter((i) => (interfaceFields.get(i.name.value) ?? []).every((f) => kept.includes(f)))
        : definition.interfaces;
      return [{ ...definition, fields, interfaces, directives: withoutKey(definition.directives) }];
    }
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION:
      return [{ ...definition, directives: withoutKey(definition.directives) }];
    case Kind.INPUT_OBJECT_TYPE_DEFINITION: {
      const kept = surface.inputFields[definition.name.value];
      if (!kept) return [definition];
      return [{ ...definition, fields: (definition.fields ?? []).filter((f) => kept.includes(f.name.value)) }];
    }
    default:
      return [definition];
  }
}

const withoutKey = (directives: readonly ConstDirectiveNode[] | undefined) =>
  directives?.filter((d) => d.name.value !== 'key');

/**
 * The types reached from the root types' fields and the directive definitions' arguments: through
 * field types, arguments, input fields, interfaces implemented and union members. An interface
 * reached as a field's type brings the types implementing it (any of them may be returned).
 */
function reachable(definitions: DefinitionNode[]): Set<string> {
  const byName = new Map<string, DefinitionNode[]>();
  const interfaces = new Set<string>();
  const implementers = new Map<string, string[]>();
  for (const d of definitions) {
    if (!('name' in d) || !d.name || d.kind === Kind.DIRECTIVE_DEFINITION) continue;
    byName.set(d.name.value, [...(byName.get(d.name.value) ?? []), d]);
    if (d.kind === Kind.INTERFACE_TYPE_DEFINITION) interfaces.add(d.name.value);
    if ('interfaces' in d)
      for (const i of d.interfaces ?? [])
        implementers.set(i.name.value, [...(implementers.get(i.name.value) ?? []), d.name.value]);
  }
  const reached = new Set<string>();
  const expanded = new Set<string>();
  const queue: string[] = [];
  const reach = (name: string, asFieldType = false) => {
    if (asFieldType && interfaces.has(name) && !expanded.has(name)) {
      expanded.add(name);
      for (const implementer of implementers.get(name) ?? []) reach(implementer);
    }
    if (reached.has(name)) return;
    reached.add(name);
    queue.push(name);
  };
  const reachArgs = (args: readonly InputValueDefinitionNode[] | undefined) => {
    for (const a of args ?? []) reach(namedOf(a.type), true);
  };
  for (const root of ROOTS) if (byName.has(root)) reach(root);
  for (const d of definitions) if (d.kind === Kind.DIRECTIVE_DEFINITION) reachArgs(d.arguments);
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    for (const d of byName.get(name) ?? []) {
      if ('fields' in d)
        for (const field of (d.fields ?? []) as ReadonlyArray<FieldDefinitionNode | InputValueDefinitionNode>) {
          reach(namedOf(field.type), true);
          if ('arguments' in field) reachArgs(field.arguments);
        }
      if ('interfaces' in d) for (const i of d.interfaces ?? []) reach(i.name.value);
      if ('types' in d) for (const member of d.types ?? []) reach(member.name.value);
    }
  }
  return reached;
}

function namedOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedOf(type.type);
}
