import {
  type ArgumentNode,
  type ConstDirectiveNode,
  type DefinitionNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  Kind,
  parse,
  type TypeNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { ABILITIES, type Ability, LEVEL_LABELS, levelsGranting } from '../../src/domain/auth/permissions.js';
import { SCOPE_NAMES, SCOPES } from '../../src/domain/connect/scopes.js';
import { loadTypeDefs } from '../../src/graphql/sdl-files.js';

/**
 * The graph is read in GraphiQL by partners who have nothing else in front of them, so every type,
 * field, argument, input field and enum value of schema/ (directive arguments included) carries a
 * description, and two kinds say one thing more:
 *
 * - a money value (any Float, and any scalar named for an amount, fee, balance, price, cost, value
 *   or rate) names its unit: naira or kobo for the NGN wallet, token or base units (lamports) on
 *   Solana, fiat units, USD, SOL, or percent;
 * - a root field (Query, Mutation, Subscription) states the permission levels and Connect scopes
 *   that reach it, in the words of accessLine, computed from the permission model and the scopes.
 */

const ROOTS = new Set(['Query', 'Mutation', 'Subscription']);

/** The words of a name that make it money, camelCase split: `minAmount`, `senderFee`, `usdValue`. */
const MONEY_WORDS = new Set([
  'amount',
  'fee',
  'balance',
  'price',
  'cost',
  'kobo',
  'credits',
  'debits',
  'value',
  'rate',
]);
const MONEY_SCALARS = new Set(['Float', 'SafeInt', 'String', 'Int']);
const UNIT_WORDS = /\b(naira|kobo|lamports|base units|token units|fiat units|percent)\b/i;
const UNIT_SYMBOLS = /\b(SOL|USD)\b/;
const namesUnit = (text: string) => UNIT_WORDS.test(text) || UNIT_SYMBOLS.test(text);

const list = (items: readonly string[]) =>
  items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

/** The sentence a root field's description holds, from the permission model and the Connect scopes. */
function accessLine(ability: Ability | 'public'): string {
  if (ability === 'public') return 'Permission: none; no credential needed.';
  const levels = levelsGranting(ability).map((level) => LEVEL_LABELS[level]);
  const scopes = SCOPE_NAMES.filter((scope) => (SCOPES[scope].abilities as readonly Ability[]).includes(ability));
  return `Permission: ${list(levels)}. Connect scope: ${list(scopes.map((s) => `\`${s}\``))}.`;
}

const ACCESS_LINES = Object.fromEntries([...ABILITIES, 'public' as const].map((a) => [a, accessLine(a)]));

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_]+/)
    .map((w) => w.toLowerCase());
}

function isMoney(name: string, type: TypeNode): boolean {
  const scalar = namedType(type);
  if (scalar === 'Float') return true;
  return MONEY_SCALARS.has(scalar) && nameWords(name).some((w) => MONEY_WORDS.has(w));
}

function accessOf(directives: readonly ConstDirectiveNode[] | undefined): Ability | 'public' | undefined {
  for (const directive of directives ?? []) {
    if (directive.name.value === 'public') return 'public';
    if (directive.name.value === 'auth') {
      const arg = directive.arguments?.find((a: ArgumentNode) => a.name.value === 'ability');
      if (arg?.value.kind === Kind.ENUM) return arg.value.value as Ability;
    }
  }
  return undefined;
}

/** Every coordinate of `document` that lacks a description, or whose description leaves out what it must say. */
function descriptionProblems(document: DocumentNode): string[] {
  const problems: string[] = [];
  const described = new Map<string, boolean>();

  const value = (coordinate: string, node: InputValueDefinitionNode) => {
    const text = node.description?.value.trim();
    if (!text) problems.push(`${coordinate}: no description`);
    else if (isMoney(node.name.value, node.type) && !namesUnit(text))
      problems.push(`${coordinate}: a money value whose description names no unit`);
  };

  const field = (typeName: string, node: FieldDefinitionNode) => {
    const coordinate = `${typeName}.${node.name.value}`;
    const text = node.description?.value.trim();
    if (!text) problems.push(`${coordinate}: no description`);
    else if (isMoney(node.name.value, node.type) && !namesUnit(text))
      problems.push(`${coordinate}: a money value whose description names no unit`);
    if (ROOTS.has(typeName)) {
      const access = accessOf(node.directives);
      if (!access) problems.push(`${coordinate}: declares neither @auth nor @public`);
      else if (text && !text.includes(ACCESS_LINES[access]!))
        problems.push(`${coordinate}: description lacks "${ACCESS_LINES[access]}"`);
    }
    for (const arg of node.arguments ?? []) value(`${coordinate}(${arg.name.value}:)`, arg);
  };

  for (const definition of document.definitions as DefinitionNode[]) {
    switch (definition.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.INTERFACE_TYPE_DEFINITION:
      case Kind.UNION_TYPE_DEFINITION:
      case Kind.ENUM_TYPE_DEFINITION:
      case Kind.INPUT_OBJECT_TYPE_DEFINITION:
      case Kind.SCALAR_TYPE_DEFINITION: {
        const name = definition.name.value;
        described.set(name, (described.get(name) ?? false) || Boolean(definition.description?.value.trim()));
        break;
      }
      case Kind.DIRECTIVE_DEFINITION:
        if (!definition.description?.value.trim()) problems.push(`@${definition.name.value}: no description`);
        for (const arg of definition.arguments ?? []) value(`@${definition.name.value}(${arg.name.value}:)`, arg);
        break;
    }
    switch (definition.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.OBJECT_TYPE_EXTENSION:
      case Kind.INTERFACE_TYPE_DEFINITION:
      case Kind.INTERFACE_TYPE_EXTENSION:
        for (const f of definition.fields ?? []) field(definition.name.value, f);
        break;
      case Kind.INPUT_OBJECT_TYPE_DEFINITION:
      case Kind.INPUT_OBJECT_TYPE_EXTENSION:
        for (const f of definition.fields ?? []) value(`${definition.name.value}.${f.name.value}`, f);
        break;
      case Kind.ENUM_TYPE_DEFINITION:
      case Kind.ENUM_TYPE_EXTENSION:
        for (const v of definition.values ?? [])
          if (!v.description?.value.trim()) problems.push(`${definition.name.value}.${v.name.value}: no description`);
        break;
    }
  }
  for (const [name, has] of described) if (!has) problems.push(`${name}: no description`);
  return problems.sort();
}

describe('descriptions of the graph', () => {
  it('finds every kind of gap, naming its coordinate', () => {
    const sdl = /* GraphQL */ `
      "Described."
      directive @auth(ability: Ability!) on FIELD_DEFINITION
      directive @public on FIELD_DEFINITION
      enum Ability { "Described." READ TRANSACT MANAGE }
      scalar SafeInt
      union Record = Wallet
      "Described."
      type Wallet {
        "Described."
        available: Float!
        "Naira, spendable now."
        held: Float!
        "The count of entries."
        balanceKobo: SafeInt!
        "In token units."
        amount: String!
        "How many."
        count: Int!
        name: String
      }
      "Described."
      input Filter { "Described." minAmount: Float, search: String }
      type Query {
        "${accessLine('READ')}"
        wallet(limit: Int): Wallet! @auth(ability: READ)
        "Moves money. ${accessLine('READ')}"
        pay: Wallet! @auth(ability: TRANSACT)
        "Open."
        info: String @public
        "Says nothing of access."
        loose: String
      }
      extend type Query {
        "${accessLine('MANAGE')}"
        keys("Described." first: Int): [String!]! @auth(ability: MANAGE)
      }
      extend type Wallet { extra: String }
    `;
    expect(descriptionProblems(parse(sdl))).toEqual(
      [
        '@auth(ability:): no description',
        '@public: no description',
        'Ability.MANAGE: no description',
        'Ability.TRANSACT: no description',
        'Ability: no description',
        'Filter.minAmount: a money value whose description names no unit',
        'Filter.search: no description',
        'Query.info: description lacks "Permission: none; no credential needed."',
        'Query.loose: declares neither @auth nor @public',
        `Query.pay: description lacks "${accessLine('TRANSACT')}"`,
        'Query.wallet(limit:): no description',
        'Query: no description',
        'Record: no description',
        'SafeInt: no description',
        'Wallet.available: a money value whose description names no unit',
        'Wallet.balanceKobo: a money value whose description names no unit',
        'Wallet.extra: no description',
        'Wallet.name: no description',
      ].sort(),
    );
  });

  it('states access in the words of the permission model and the Connect scopes', () => {
    expect(accessLine('READ')).toBe(
      'Permission: Read Only, Transactions, Account Management or Full Access. Connect scope: `read`, `transact` or `manage`.',
    );
    expect(accessLine('TRANSACT')).toBe('Permission: Transactions or Full Access. Connect scope: `transact`.');
    expect(accessLine('MANAGE')).toBe('Permission: Account Management or Full Access. Connect scope: `manage`.');
  });

  it('leaves nothing in schema/ undescribed', () => {
    const document = loadTypeDefs();
    const roots = document.definitions.filter(
      (d) =>
        (d.kind === Kind.OBJECT_TYPE_DEFINITION || d.kind === Kind.OBJECT_TYPE_EXTENSION) && ROOTS.has(d.name.value),
    );
    // The root rule is checked on every root field the SDL declares.
    expect(roots.length).toBeGreaterThan(10);
    expect(descriptionProblems(document)).toEqual([]);
  });
});
