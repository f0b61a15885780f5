/**
 * Bundle atomicity at scale (issue 30, "0 partial bundles over 1,000 bundles, with a failing member
 * injected at random"): a real localnet child, Jito's own client (jito-js-rpc) sending bundles of 2-5
 * transfers, about half with one member made to fail; then every bundle is checked against the chain
 * (all members landed, consecutive and in order in one block, or none, with no lamports left behind).
 * Run: npx node packages/localnet/test/bench/bundle-atomicity-bench.ts [bundles=1000]
 */
import { JitoJsonRpcClient } from "jito-js-rpc";
import { fundedSigner, startTestLocalnet } from "../helpers.ts";
import { sendRandomBundles, tallyBundles } from "../bundle-helpers.ts";

const BUNDLES = Number(process.argv[2] ?? 1000);

const net = await startTestLocalnet({ slotMs: 50 });
try {
  const jito = new JitoJsonRpcClient(net.handle.blockEngineUrl);
  const tipAccounts = (await jito.getTipAccounts()).result as string[];
  const payer = await fundedSigner(net, 1_000_000_000_000n);
  const started = performance.now();
  const sent = await sendRandomBundles(net, jito, payer, tipAccounts[0]!, BUNDLES, "bundle-atomicity-bench");
  const sentMs = performance.now() - started;
  const tally = await tallyBundles(net, jito, sent, 300_000);
  const withFailure = sent.filter((b) => b.failing !== null).length;
  const members = sent.reduce((n, b) => n + b.signatures.length, 0);
  console.log(`bundles: ${sent.length} (${members} transactions), with a failing member: ${withFailure}`);
  console.log(`sent in ${(sentMs / 1000).toFixed(1)} s`);
  console.log(
    `landed whole: ${tally.whole}, none: ${tally.none}, partial: ${tally.partial}, out of order: ${tally.outOfOrder}, ` +
      `failing but landed: ${tally.failedButLanded}, state leaked from a rolled-back member: ${tally.leaked}`,
  );
  const ok =
    tally.partial === 0 &&
    tally.outOfOrder === 0 &&
    tally.failedButLanded === 0 &&
    tally.leaked === 0 &&
    tally.whole === sent.length - withFailure;
  console.log(ok ? "PASS: 0 partial bundles" : "FAIL");
  process.exitCode = ok ? 0 : 1;
} finally {
  await net.stop();
}
