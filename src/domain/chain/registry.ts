import { badInput } from '../errors.js';
import type { ChainFamily } from './family.js';

/** A family of any networks and exchange types, as the registry holds it. */
export type AnyChainFamily = ChainFamily<any, any, any, any>;

/**
 * The chain families a process serves, by name, given by its wiring (services.ts): the core looks a
 * family up here and never imports one.
 */
export class ChainFamilies {
  private readonly byName = new Map<string, AnyChainFamily>();

  constructor(families: readonly AnyChainFamily[]) {
    for (const family of families) {
      if (this.byName.has(family.name)) throw new Error(`Chain family ${family.name} is registered twice.`);
      this.byName.set(family.name, family);
    }
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /** The family of that name; an unknown one is the caller's input (400 naming `field`). */
  get(name: string, field = 'chain'): AnyChainFamily {
    const family = this.byName.get(name);
    if (!family) throw badInput(field, `${field} must be one of ${this.names.join(', ')}.`);
    return family;
  }

  /** The family an address belongs to, when exactly one family reads it as its own. */
  familyOfAddress(address: string): AnyChainFamily | undefined {
    const matches = [...this.byName.values()].filter((family) => family.addresses.isValid(address));
    return matches.length === 1 ? matches[0] : undefined;
  }
}
