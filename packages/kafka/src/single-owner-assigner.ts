import kafkajs, { type PartitionAssigner } from 'kafkajs';

const { AssignerProtocol } = kafkajs;

/** What a member says about itself when it joins: whether it owns the partitions now, and since when it runs. */
export interface OwnerClaim {
  owner: boolean;
  startedAt: number;
}

export const SINGLE_OWNER_PROTOCOL = 'SluiceSingleOwner';

/**
 * The member that gets every partition: the one that owns them now (so a member joining never
 * takes them away), else the longest running; ties broken by member id. Members whose metadata
 * cannot be read count as newest.
 */
export function chooseOwner(members: { memberId: string; claim: OwnerClaim | undefined }[]): string | undefined {
  const rank = (m: { memberId: string; claim: OwnerClaim | undefined }) => [
    m.claim?.owner ? 0 : 1,
    m.claim?.startedAt ?? Number.MAX_SAFE_INTEGER,
  ];
  const sorted = [...members].sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0]! - rb[0]! || ra[1]! - rb[1]! || a.memberId.localeCompare(b.memberId);
  });
  return sorted[0]?.memberId;
}

function decodeClaim(metadata: Buffer): OwnerClaim | undefined {
  try {
    const decoded = AssignerProtocol.MemberMetadata.decode(metadata);
    const claim = JSON.parse(decoded?.userData.toString('utf8') ?? '') as Partial<OwnerClaim>;
    return typeof claim.startedAt === 'number'
      ? { owner: claim.owner === true, startedAt: claim.startedAt }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A kafkajs partition assigner that gives every partition of the subscribed topics to one member
 * (`chooseOwner`) and none to the others, which stay in the group as standbys. For a consumer whose
 * state is held in one process and cannot be split by partition.
 */
export function singleOwnerAssigner(claim: () => OwnerClaim): PartitionAssigner {
  return ({ cluster }) => ({
    name: SINGLE_OWNER_PROTOCOL,
    version: 0,
    protocol: ({ topics }) => ({
      name: SINGLE_OWNER_PROTOCOL,
      metadata: AssignerProtocol.MemberMetadata.encode({
        version: 0,
        topics,
        userData: Buffer.from(JSON.stringify(claim())),
      }),
    }),
    assign: async ({ members, topics }) => {
      const owner = chooseOwner(members.map((m) => ({ memberId: m.memberId, claim: decodeClaim(m.memberMetadata) })));
      const all: Record<string, number[]> = {};
      for (const topic of topics) all[topic] = cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId);
      return members.map((m) => ({
        memberId: m.memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: m.memberId === owner ? all : {},
          userData: Buffer.alloc(0),
        }),
      }));
    },
  });
}
