/**
 * The fee market in a fleet: which replica follows blocks, and how the others keep the same window.
 * The holder of the fee lease follows blocks and logs every change its window accepts (window-log.ts);
 * the others read no blocks and replay the log into their own windows. With the log out of reach,
 * every replica follows blocks itself: fees keep working, at a provider cost. Without a fleet, this
 * replica always leads and nothing is logged.
 */
import type { Lease } from "../store/lease.ts";
import type { FollowerState } from "./block-follower.ts";
import type { FeeWindow } from "./fee-window.ts";
import { recordingWindow, replay } from "./window-log.ts";
import type { WindowChange, WindowLog } from "./window-log.ts";

/** The fleet's side of following blocks. */
export interface FleetFollowing {
  lease: Lease;
  log: WindowLog;
  /** Whether the log can be reached now; while not, this replica follows blocks itself. */
  reachable(): boolean;
}

/** One replica's part in following blocks. */
export interface FeeReplication {
  /** The window the block follower writes into (it records changes for the log in a fleet). */
  readonly window: FeeWindow;
  /** Whether this replica followed blocks itself at its last turn. */
  leading(): boolean;
  /**
   * Takes this replica's turn: decides whether it leads (holds the lease, or cannot reach the log);
   * if not, replays what the leader logged since the last turn. Resolves to whether it leads.
   */
  turn(): Promise<boolean>;
  /** After the follower's tick: logs the changes it made, with its progress. */
  logChanges(state: FollowerState): Promise<void>;
  /** The leader's progress as last replayed (undefined before any). */
  mirrored(): FollowerState | undefined;
  /** Gives the lease up, if held, so that another replica leads at once. */
  release(): Promise<void>;
}

/** Creates this replica's part over its own window; `fleet` undefined means a lone replica. */
export function createFeeReplication(
  window: FeeWindow,
  fleet: FleetFollowing | undefined,
  onError: (error: unknown) => void,
): FeeReplication {
  if (fleet === undefined) {
    return {
      window,
      leading: () => true,
      turn: async () => true,
      logChanges: async () => {},
      mirrored: () => undefined,
      release: async () => {},
    };
  }
  // What the follower changed this tick.
  const unlogged: WindowChange[] = [];
  let leading = false;
  let mirrored: FollowerState | undefined;
  let cursor: string | undefined;
  return {
    window: recordingWindow(window, (change) => unlogged.push(change)),
    leading: () => leading,
    async turn() {
      leading = !fleet.reachable() || (await fleet.lease.hold());
      if (!leading) {
        try {
          const read = await fleet.log.readAfter(cursor);
          cursor = read.cursor;
          mirrored = replay(window, read.entries) ?? mirrored;
        } catch (error) {
          onError(error);
        }
      }
      return leading;
    },
    async logChanges(state) {
      if (unlogged.length === 0) return;
      const entries = unlogged.splice(0).map((change) => ({ ...change, state }));
      await fleet.log.append(entries).catch(onError);
    },
    mirrored: () => mirrored,
    async release() {
      if (leading) await fleet.lease.release();
    },
  };
}
