import {
  type GraphQLInputType,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  type OperationDefinitionNode,
  typeFromAST,
  type DocumentNode,
} from 'graphql';

const SAMPLE_SCALARS: Record<string, unknown> = {
  ID: '00000000-0000-4000-8000-000000000000',
  String: 'sample',
  Int: 1,
  SafeInt: 1,
  Float: 1,
  Boolean: false,
  DateTime: '2026-01-01T00:00:00.000Z',
  JSON: {},
};

function sample(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sample(type.ofType);
  if (isListType(type)) return [sample(type.ofType)];
  if (isScalarType(type)) return SAMPLE_SCALARS[type.name] ?? 'sample';
  if (isEnumType(type)) return type.getValues()[0]!.value;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((f) => isNonNullType(f.type))
        .map((f) => [f.name, sample(f.type)]),
    );
  }
  return null;
}

/** Well-formed variables for any operation, so access checks can be exercised on every field. */
export function sampleVariables(schema: GraphQLSchema, document: DocumentNode): Record<string, unknown> {
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  )!;
  return Object.fromEntries(
    (operation.variableDefinitions ?? []).map((v) => [
      v.variable.name.value,
      sample(typeFromAST(schema, v.type as never) as GraphQLInputType),
    ]),
  );
}
