import type { Resolvers } from '../generated/resolvers-types.js';

export const auditResolvers: Resolvers = {
  Query: {
    auditRecords: (_root, { filter, first, before }, { principal, services }) =>
      services.auditLog.list(
        principal!,
        {
          action: filter?.action ?? undefined,
          targetType: filter?.targetType ?? undefined,
          targetId: filter?.targetId ?? undefined,
          from: filter?.from ?? undefined,
          to: filter?.to ?? undefined,
        },
        first ?? 50,
        before ?? undefined,
      ),
  },
};
