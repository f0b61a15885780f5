/**
 * The services the gateway implements today. Every client calls every RPC of every service; for a
 * service not listed here it expects UNIMPLEMENTED (and fails once the service answers, so this list
 * must grow as services land — that is the point).
 * All seven have landed; the UNIMPLEMENTED branches stay for services added later.
 */
export const LANDED_SERVICES: readonly string[] = [
  "ProgramService",
  "FeeService",
  "TransactionService",
  "CollectionService",
  "AccountService",
  "WalletService",
  "TokenService",
];

/** Whether `service` (e.g. `FeeService`) has landed. */
export function landed(service: string): boolean {
  return LANDED_SERVICES.includes(service);
}
