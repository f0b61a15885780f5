import http2 from "node:http2";
import { create } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { TransactionService, WatchStatusResponseSchema } from "../../gen/solgate/v1/transaction_service_pb.js";
const handler = connectNodeAdapter({ routes: (router) => router.service(TransactionService, {
  async *watchStatus(_req, ctx) {
    yield create(WatchStatusResponseSchema, { event: { case: "heartbeat", value: { slot: 1n } } });
    await new Promise((r) => ctx.signal.addEventListener("abort", r));
  },
}) });
const s = http2.createServer(handler);
s.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ msg: "solgate listening", port: (s.address() as any).port })));
setInterval(() => { const m = process.memoryUsage(); console.error(`heap ${(m.heapUsed/1048576).toFixed(0)} rss ${(m.rss/1048576).toFixed(0)}`); }, 3000).unref();
process.on("SIGTERM", () => process.exit(0));
