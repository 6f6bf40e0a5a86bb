#!/usr/bin/env python3
"""Generates a YCSB load or run trace with the real YCSB 0.17.0 and writes it
as a compact trace file for apps/leveldb's driver.

YCSB runs with its BasicDB binding, which prints every operation it is
asked to do ("READ usertable user123 [ <all fields>]"); this script keeps
the operation and the key.  The workloads are YCSB's core workloads, with
the properties of YCSB's workloads/workload{a,b,c,d} files:

  a   read 0.5, update 0.5, zipfian        b   read 0.95, update 0.05, zipfian
  c   read 1.0, zipfian                    d   read 0.95, insert 0.05, latest
  c-uniform   read 1.0, uniform

"zipfian" is YCSB's scrambled Zipfian generator with its default constant
0.99.  YCSB is given one field of 1 byte (fieldcount=1, fieldlength=1) only
to keep its output small: the field length does not change which keys YCSB
chooses.  The driver writes values of --value-size bytes.

Trace format (text, one operation per line, after one '#' header line):
  R <key>            read (Get)
  U <key> <length>   update (Put of a value of <length> bytes)
  I <key> <length>   insert (Put of a value of <length> bytes)

Needs the jars of apps/leveldb/ycsb/fetch_ycsb.sh (run it first).
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
JAR_DIR = os.path.join(ROOT, "third_party", "ycsb")

WORKLOADS = {
    "a": {"readproportion": "0.5", "updateproportion": "0.5", "insertproportion": "0",
          "requestdistribution": "zipfian"},
    "b": {"readproportion": "0.95", "updateproportion": "0.05", "insertproportion": "0",
          "requestdistribution": "zipfian"},
    "c": {"readproportion": "1", "updateproportion": "0", "insertproportion": "0",
          "requestdistribution": "zipfian"},
    "d": {"readproportion": "0.95", "updateproportion": "0", "insertproportion": "0.05",
          "requestdistribution": "latest"},
    "c-uniform": {"readproportion": "1", "updateproportion": "0", "insertproportion": "0",
                  "requestdistribution": "uniform"},
}

OPERATION_CODES = {"READ": "R", "UPDATE": "U", "INSERT": "I"}


def ycsb_command(workload, phase, records, operations):
    """The java command line that makes YCSB print the operations."""
    properties = {
        "workload": "site.ycsb.workloads.CoreWorkload",
        "recordcount": str(records),
        "operationcount": str(operations),
        "fieldcount": "1",
        "fieldlength": "1",
        "readallfields": "true",
        "scanproportion": "0",
        "readmodifywriteproportion": "0",
        "basicdb.verbose": "true",
    }
    properties.update(WORKLOADS[workload])
    command = ["java", "-cp", os.path.join(JAR_DIR, "*"), "site.ycsb.Client",
               "-load" if phase == "load" else "-t", "-db", "site.ycsb.BasicDB", "-threads", "1"]
    for name, value in sorted(properties.items()):
        command += ["-p", f"{name}={value}"]
    return command


def convert(lines, value_size, output):
    """Writes the trace lines for YCSB's operation lines; returns the count."""
    count = 0
    for line in lines:
        parts = line.split(" ", 3)
        code = OPERATION_CODES.get(parts[0])
        if code is None or len(parts) < 3 or parts[1] != "usertable":
            continue
        if parts[0] == "READ":
            output.write(f"R {parts[2]}\n")
        else:
            output.write(f"{code} {parts[2]} {value_size}\n")
        count += 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="c")
    parser.add_argument("--phase", choices=["load", "run"], required=True)
    parser.add_argument("--records", type=int, required=True, help="YCSB recordcount")
    parser.add_argument("--operations", type=int, default=0,
                        help="YCSB operationcount (run phase)")
    parser.add_argument("--value-size", type=int, default=1024,
                        help="value length written for updates and inserts")
    parser.add_argument("--output", required=True, help="trace file to write")
    args = parser.parse_args()

    if not os.path.exists(os.path.join(JAR_DIR, "core-0.17.0.jar")):
        sys.exit(f"make_trace: {JAR_DIR}/core-0.17.0.jar missing: run apps/leveldb/ycsb/fetch_ycsb.sh")
    expected = args.records if args.phase == "load" else args.operations
    command = ycsb_command(args.workload, args.phase, args.records, args.operations)
    directory = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(directory, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False) as output:
        output.write(f"# ycsb-0.17.0 workload={args.workload} phase={args.phase} "
                     f"records={args.records} operations={args.operations} "
                     f"value_size={args.value_size}\n")
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, errors="replace")
        count = convert(process.stdout, args.value_size, output)
        stderr = process.stderr.read()
        status = process.wait()
    if status != 0 or count != expected:
        os.unlink(output.name)
        sys.exit(f"make_trace: YCSB exited with {status} after {count} of {expected} "
                 f"operations:\n{stderr[-2000:]}")
    os.chmod(output.name, 0o644)
    os.replace(output.name, args.output)
    print(f"make_trace: {count} operations -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
