// Compiles the chain fixtures with solcjs (the compiler bundled in the npm package: no
// download) and prints, as JSON, what tests/api/chain.rs places on the local node:
// - `bytecode`: TestUSDC's creation code (fixtures/chain/TestUSDC.sol), deployed;
// - `exactProxy`, `uptoProxy`: the runtime code of the stand-ins for x402's Permit2 proxies
//   (fixtures/chain/X402Permit2Proxies.sol), set at x402's canonical proxy addresses;
// - `permit2`: Permit2's published runtime code, set at its canonical address. It comes from
//   Uniswap's own deploy helper in the npm package @uniswap/v4-periphery
//   (lib/permit2/test/utils/DeployPermit2.sol, the code it `etch`es). That copy's immutables
//   were filled by a test deployment: a cached chain id of 31337 and a domain separator made
//   for another address. The cached chain id is zeroed here, so Permit2 computes its EIP-712
//   domain from the chain and its own address, as a real deployment does (EIP712's fallback
//   when `block.chainid` differs from the cached one).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import solc from "solc";

const fixture = (name) =>
  readFileSync(fileURLToPath(new URL(`../../fixtures/chain/${name}`, import.meta.url)), "utf8");
const input = {
  language: "Solidity",
  sources: {
    "TestUSDC.sol": { content: fixture("TestUSDC.sol") },
    "X402Permit2Proxies.sol": { content: fixture("X402Permit2Proxies.sol") },
  },
  settings: {
    // An EVM version every current local node runs.
    evmVersion: "cancun",
    optimizer: { enabled: true, runs: 200 },
    outputSelection: {
      "TestUSDC.sol": { TestUSDC: ["abi", "evm.bytecode.object"] },
      "X402Permit2Proxies.sol": { "*": ["evm.deployedBytecode.object"] },
    },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors ?? []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  console.error(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
const contract = output.contracts["TestUSDC.sol"].TestUSDC;
const proxies = output.contracts["X402Permit2Proxies.sol"];
const runtime = (name) => "0x" + proxies[name].evm.deployedBytecode.object;

function permit2() {
  const helper = readFileSync(
    fileURLToPath(new URL(
      "node_modules/@uniswap/v4-periphery/lib/permit2/test/utils/DeployPermit2.sol",
      import.meta.url,
    )),
    "utf8",
  );
  const found = [...helper.matchAll(/hex"([0-9a-fA-F]+)"/g)];
  if (found.length !== 1) throw new Error(`expected one hex literal in DeployPermit2.sol, found ${found.length}`);
  const code = found[0][1].toLowerCase();
  // The cached chain id is a PUSH32 (0x7f) of 31337 (0x7a69): exactly one, zeroed.
  const cached = "7f" + "7a69".padStart(64, "0");
  const at = code.indexOf(cached);
  if (at < 0 || code.indexOf(cached, at + 1) >= 0) {
    throw new Error("expected exactly one PUSH32 of chain id 31337 in Permit2's runtime code");
  }
  return "0x" + code.slice(0, at) + "7f" + "0".repeat(64) + code.slice(at + cached.length);
}

process.stdout.write(
  JSON.stringify({
    abi: contract.abi,
    bytecode: "0x" + contract.evm.bytecode.object,
    exactProxy: runtime("ExactPermit2Proxy"),
    uptoProxy: runtime("UptoPermit2Proxy"),
    permit2: permit2(),
  }),
);
