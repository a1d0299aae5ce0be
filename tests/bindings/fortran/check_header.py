#!/usr/bin/env python3
"""Check the Fortran module against the C header.

usage: check_header.py include/xcomm.h bindings/fortran/xcomm.f90

- every function the header declares has a bind(c, name='xc_...') interface
  and a public Fortran procedure of the same name, and nothing else is bound;
- every enum value and integer #define of the header that the module defines
  has the header's value, and none of the header's enum constants and integer
  #defines is missing (the *_FORCE_32BIT markers excepted).
"""
import re
import sys


def c_int(text):
    text = text.strip().strip('()')
    return int(text, 0)


def main():
    header = open(sys.argv[1]).read()
    module = open(sys.argv[2]).read()
    # Comments out of the way (header /* */, module !).
    header = re.sub(r'/\*.*?\*/', '', header, flags=re.S)
    module_code = '\n'.join(line.split('!')[0] for line in module.splitlines())
    errors = []

    functions = set(re.findall(r'\b(xc_[a-z0-9_]+)\s*\(', re.sub(r'#define[^\n]*', '', header)))
    functions = {f for f in functions if not f.endswith('_t')}
    bound = set(re.findall(r"bind\(c,\s*name='(xc_[a-z0-9_]+)'\)", module_code))
    for f in sorted(functions - bound):
        errors.append(f'{f}: declared in the header, no bind(c) interface')
    for f in sorted(bound - functions):
        errors.append(f'{f}: bound in the module, not in the header')
    public = set()
    for names in re.findall(r'public\s*::\s*([^\n]+)', module_code, flags=re.I):
        public.update(n.strip().lower() for n in names.split(',') if n.strip())
    for f in sorted(functions):
        if f not in public:
            errors.append(f'{f}: no public Fortran procedure')

    constants = {}
    for name, value in re.findall(r'\b(XC_[A-Z0-9_]+)\s*=\s*(-?(?:0x[0-9A-Fa-f]+|\d+))', header):
        constants[name] = int(value, 0)
    defines = set()
    for name, value in re.findall(r'#define\s+(XC_[A-Z0-9_]+)\s+(\(?-?(?:0x[0-9A-Fa-f]+|\d+)\)?)', header):
        constants[name] = c_int(value)
        defines.add(name)
    enums = set(re.findall(r'\b(XC_[A-Z0-9_]+)\s*=', header))

    fortran = {}
    for name, value in re.findall(r'integer,\s*parameter,\s*public\s*::\s*(XC_[A-Z0-9_]+)\s*=\s*([^\n]+)',
                                  module_code):
        value = value.strip()
        if re.fullmatch(r'-?\d+', value):
            fortran[name] = int(value)
        elif value == 'huge(0_int32)':
            fortran[name] = 2**31 - 1
    for name, value in sorted(fortran.items()):
        if name in constants and constants[name] != value:
            errors.append(f'{name}: {value} in the module, {constants[name]} in the header')
    for name in sorted(enums):
        if name.endswith('FORCE_32BIT'):
            continue
        if name not in fortran:
            errors.append(f'{name}: in the header, not in the module')
    for name in sorted(defines):
        if name not in fortran:
            errors.append(f'{name}: #define in the header, not in the module')

    for e in errors:
        print('FAIL:', e)
    print(f'{len(functions)} functions, {len(fortran)} constants checked; {len(errors)} problems')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
