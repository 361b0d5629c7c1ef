import { INT64_KEY, Keyset } from '../common/pagination/keyset.js';
import type { Plant } from './entities/plant.entity.js';

/** GET /plants, by ascending id: a cursor is the last id's decimal digits. */
export const PLANTS_BY_ID = new Keyset<Plant>({ property: 'id', codec: INT64_KEY });
