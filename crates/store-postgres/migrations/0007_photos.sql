-- Menu photos (API v1.1): each upload as sent, and the rendition guests
-- are sent (a JPEG at most 800 px on its longer side), made once at upload.
-- In the database, so a backup, a migration and verify carry them.
create table images (
    shop_id uuid not null references shops (shop_id),
    image_id uuid not null,
    content_type text not null, -- what the upload is: image/jpeg, image/png or image/webp
    width bigint not null,
    height bigint not null,
    original bytea not null,
    rendition bytea not null,
    rendition_width bigint not null,
    rendition_height bigint not null,
    created_at timestamptz not null,
    primary key (shop_id, image_id)
);

-- Guests ask for a photo by its id alone (`/images/{imageId}`).
create index images_by_id on images (image_id);
