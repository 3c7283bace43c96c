import kafkajs, { type PartitionAssigner } from 'kafkajs';

const { AssignerProtocol } = kafkajs;

export const COPARTITIONED_PROTOCOL = 'SluiceCopartitioned';

/**
 * Which member gets partition `partition` of every topic: the members sorted by the process id
 * they joined with (then member id), taken in turn. The same index goes to the same member whatever
 * the topic, so a key (which lands on the same partition index of topics with the same partition
 * count) is owned by one member everywhere — and by one process across groups whose members are
 * the same processes.
 */
export function copartitionedOwner(
  members: readonly { memberId: string; processId: string }[],
  partition: number,
): string | undefined {
  const sorted = [...members].sort(
    (a, b) => a.processId.localeCompare(b.processId) || a.memberId.localeCompare(b.memberId),
  );
  return sorted[partition % sorted.length]?.memberId;
}

function decodeProcessId(metadata: Buffer): string {
  try {
    return AssignerProtocol.MemberMetadata.decode(metadata)?.userData.toString('utf8') ?? '';
  } catch {
    return '';
  }
}

/**
 * A kafkajs partition assigner that gives partition *p* of every subscribed topic to the same
 * member (`copartitionedOwner`): for a consumer whose per-key state spans several topics
 * (docs/reference/ordering.md, "Scaling out"). `processId` is the same for every group of one process.
 */
export function copartitionedAssigner(processId: string): PartitionAssigner {
  return ({ cluster }) => ({
    name: COPARTITIONED_PROTOCOL,
    version: 0,
    protocol: ({ topics }) => ({
      name: COPARTITIONED_PROTOCOL,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.from(processId) }),
    }),
    assign: async ({ members, topics }) => {
      const ids = members.map((m) => m.memberId);
      const named = members.map((m) => ({ memberId: m.memberId, processId: decodeProcessId(m.memberMetadata) }));
      const assignment = new Map<string, Record<string, number[]>>(ids.map((id) => [id, {}]));
      for (const topic of topics) {
        for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
          const owner = assignment.get(copartitionedOwner(named, partitionId)!)!;
          (owner[topic] ??= []).push(partitionId);
        }
      }
      return ids.map((memberId) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: assignment.get(memberId)!,
          userData: Buffer.alloc(0),
        }),
      }));
    },
  });
}
