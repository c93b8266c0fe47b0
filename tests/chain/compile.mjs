// Compiles fixtures/chain/TestUSDC.sol with solcjs (the compiler bundled in the npm package: no
// download) and prints {abi, bytecode} as JSON. tests/api/chain.rs deploys the bytecode.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import solc from "solc";

const source = fileURLToPath(new URL("../../fixtures/chain/TestUSDC.sol", import.meta.url));
const input = {
  language: "Solidity",
  sources: { "TestUSDC.sol": { content: readFileSync(source, "utf8") } },
  settings: {
    // An EVM version every current local node runs.
    evmVersion: "cancun",
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { TestUSDC: ["abi", "evm.bytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors ?? []).filter((e) => e.severity === "error");
if (errors.length > 0) {
  console.error(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
const contract = output.contracts["TestUSDC.sol"].TestUSDC;
process.stdout.write(
  JSON.stringify({ abi: contract.abi, bytecode: "0x" + contract.evm.bytecode.object }),
);
