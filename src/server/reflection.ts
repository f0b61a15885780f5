/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`), so `buf curl` and `grpcurl` call
 * Solgate with no schema at hand. Answers from the generated descriptors: each file is sent with
 * its dependencies, and each file at most once per stream, as the protocol asks.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { DescExtension, DescFile, DescMessage, DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";

/** The reflection services' own descriptors, to list them beside the application's. */
export const REFLECTION_SERVICES: readonly DescService[] = [v1.ServerReflection, v1alpha.ServerReflection];

/** What reflection answers from: the files of `services` and all their dependencies. */
interface Index {
  services: string[];
  files: Map<string, DescFile>;
  symbols: Map<string, DescFile>;
  extensions: DescExtension[];
  binary: Map<string, Uint8Array>;
}

function encoded(index: Index, file: DescFile): Uint8Array {
  let bytes = index.binary.get(file.name);
  if (bytes === undefined) {
    bytes = toBinary(FileDescriptorProtoSchema, file.proto);
    index.binary.set(file.name, bytes);
  }
  return bytes;
}

function buildIndex(services: readonly DescService[], extraFiles: readonly DescFile[]): Index {
  const index: Index = { services: [], files: new Map(), symbols: new Map(), extensions: [], binary: new Map() };
  const addMessage = (file: DescFile, m: DescMessage) => {
    index.symbols.set(m.typeName, file);
    for (const f of m.fields) index.symbols.set(`${m.typeName}.${f.name}`, file);
    for (const e of m.nestedEnums) index.symbols.set(e.typeName, file);
    for (const x of m.nestedExtensions) addExtension(file, x);
    for (const n of m.nestedMessages) addMessage(file, n);
  };
  const addExtension = (file: DescFile, x: DescExtension) => {
    index.symbols.set(x.typeName, file);
    index.extensions.push(x);
  };
  const addFile = (file: DescFile) => {
    if (index.files.has(file.proto.name)) return;
    index.files.set(file.proto.name, file);
    for (const dep of file.dependencies) addFile(dep);
    for (const e of file.enums) index.symbols.set(e.typeName, file);
    for (const m of file.messages) addMessage(file, m);
    for (const x of file.extensions) addExtension(file, x);
    for (const s of file.services) {
      index.symbols.set(s.typeName, file);
      for (const m of s.methods) index.symbols.set(`${s.typeName}.${m.name}`, file);
    }
  };
  for (const s of services) {
    if (!index.services.includes(s.typeName)) index.services.push(s.typeName);
    addFile(s.file);
  }
  for (const file of extraFiles) addFile(file);
  return index;
}

/** The v1 and v1alpha messages have the same shape; this is that shape, for either version. */
type AnyRequest = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;
type ResponseInit = Omit<v1.ServerReflectionResponse, "$typeName" | "$unknown" | "originalRequest" | "validHost">;

/** Answers one request of a stream; `sent` holds the files this stream already has. */
function answer(index: Index, req: AnyRequest, sent: Set<string>): ResponseInit["messageResponse"] {
  const error = (errorCode: Code, errorMessage: string) =>
    ({ case: "errorResponse", value: { errorCode, errorMessage } }) as ResponseInit["messageResponse"];
  const files = (file: DescFile | undefined, what: string) => {
    if (file === undefined) return error(Code.NotFound, `${what} not found`);
    const out: Uint8Array[] = [];
    const visit = (f: DescFile, root: boolean) => {
      // The file asked for is always answered; its dependencies only if this stream lacks them.
      if (!root && sent.has(f.proto.name)) return;
      sent.add(f.proto.name);
      out.push(encoded(index, f));
      for (const dep of f.dependencies) visit(dep, false);
    };
    visit(file, true);
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out } } as ResponseInit["messageResponse"];
  };
  const m = req.messageRequest;
  switch (m.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: index.services.map((name) => ({ name })) },
      } as ResponseInit["messageResponse"];
    case "fileByFilename":
      return files(index.files.get(m.value), `file ${JSON.stringify(m.value)}`);
    case "fileContainingSymbol":
      return files(index.symbols.get(m.value.replace(/^\./, "")), `symbol ${JSON.stringify(m.value)}`);
    case "fileContainingExtension": {
      const x = index.extensions.find(
        (e) => e.extendee.typeName === m.value.containingType && e.number === m.value.extensionNumber,
      );
      return files(x?.file, `extension ${m.value.extensionNumber} of ${JSON.stringify(m.value.containingType)}`);
    }
    case "allExtensionNumbersOfType": {
      if (!index.symbols.has(m.value)) return error(Code.NotFound, `type ${JSON.stringify(m.value)} not found`);
      const numbers = index.extensions.filter((e) => e.extendee.typeName === m.value).map((e) => e.number);
      return {
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: m.value, extensionNumber: numbers },
      } as ResponseInit["messageResponse"];
    }
    default:
      return error(Code.InvalidArgument, "empty or unsupported reflection request");
  }
}

/**
 * Registers ServerReflection (v1 and v1alpha) on `router`, describing `services` (the application's,
 * health's) plus reflection itself.
 */
export function registerReflection(router: ConnectRouter, services: readonly DescService[]): void {
  // Error details travel as `google.protobuf.Any`; clients resolve their type through reflection.
  const index = buildIndex([...services, ...REFLECTION_SERVICES], [file_google_rpc_error_details]);
  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const req of requests) {
        yield create(v1.ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(index, req, sent),
        });
      }
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const req of requests) {
        yield create(v1alpha.ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(index, req, sent) as never,
        });
      }
    },
  });
}
