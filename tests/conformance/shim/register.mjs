// node --import ./shim/register.mjs: installs hooks.mjs (Node 20 lacks fs.globSync).
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
