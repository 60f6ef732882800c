import { describe, expect, it } from 'vitest';
import { RECIPES } from '../../src/modules/devtools/trigger.recipes.ts';
import { TRIGGERABLE_EVENT_TYPES } from '../../src/modules/devtools/trigger.types.ts';

describe('the triggerable event types', () => {
  it('are exactly the types with a recipe (the dashboard offers this list)', () => {
    expect([...TRIGGERABLE_EVENT_TYPES].sort()).toEqual(Object.keys(RECIPES).sort());
  });
});
